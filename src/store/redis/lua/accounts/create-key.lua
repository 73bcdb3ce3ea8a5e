-- CREATE_KEY: adds a key to an existing account, unless the account already has ARGV max keys ("" for no limit):
-- counted in this same step, so keys created at once never pass it (revoked keys count: they are kept). The lookup
-- indexes outside the slot are written after, by the caller, so a half-made key is never reachable.
-- KEYS: a k keys. ARGV: key id, max keys, then the key hash's field/value pairs.
-- Reply: 1 created, 0 unknown account, -1 the account has max keys.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' and redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[2]) then return -1 end
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
redis.call('SADD', KEYS[3], ARGV[1])
return 1
