-- CREATE_ACCOUNT: writes a new account's hash and, when it has a trial package (SIGNUP_TOKENS), the package and its
-- grant marker `signup`, in one step: the account never exists without its trial, and is made (and so granted) once.
-- Not yet reachable: the caller claims the email and lists the account after. KEYS: a p g. A: package_id ("" for no
-- trial), package (its value), fields (the account hash's field/value pairs, flat). Reply: 1.
--#include helpers/args.lua
redis.call('HSET', KEYS[1], unpack(A.fields))
if A.package_id ~= '' then
  redis.call('HSET', KEYS[2], A.package_id, A.package)
  redis.call('HSET', KEYS[3], 'signup', A.package_id)
end
return 1
