-- CREATE_ACCOUNT: writes a new account's hash and, when it has a trial package (SIGNUP_TOKENS), the package and its
-- grant marker `signup`, in one step: the account never exists without its trial, and is made (and so granted) once.
-- Not yet reachable: the caller claims the email and lists the account after. KEYS: a p g. ARGV: package id ("" for
-- no trial), package value, then the account hash's field/value pairs. Reply: 1.
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
if ARGV[1] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('HSET', KEYS[3], 'signup', ARGV[1])
end
return 1
