-- UPDATE_ACCOUNT: sets fields of an existing account (never creating one), or of any hash of the slot it is given (a
-- key's). KEYS: a. A: fields (field/value pairs, flat). Reply: the hash, flat | {} for an unknown account.
--#include helpers/args.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if #A.fields > 0 then redis.call('HSET', KEYS[1], unpack(A.fields)) end
return redis.call('HGETALL', KEYS[1])
