-- CREATE_KEY: adds a key to an existing account, unless the account already has max_keys (-1 for no limit): counted
-- in this same step, so keys created at once never pass it (revoked keys count: they are kept). The lookup indexes
-- outside the slot are written after, by the caller, so a half-made key is never reachable.
-- KEYS: a k keys. A: id (the key's), max_keys, fields (the key hash's field/value pairs, flat).
-- Reply: 1 created, 0 unknown account, -1 the account has max keys.
--#include helpers/args.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if A.max_keys >= 0 and redis.call('SCARD', KEYS[3]) >= A.max_keys then return -1 end
redis.call('HSET', KEYS[2], unpack(A.fields))
redis.call('SADD', KEYS[3], A.id)
return 1
