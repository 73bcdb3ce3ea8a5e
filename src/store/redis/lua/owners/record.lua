-- OWNERS_RECORD: writes ids' owners into one hash of the owners' buckets, with the hash's expiry in the same step, so
-- a hash never lives on without it. One call per hash (its own slot on a Cluster); a stored answer's response and its
-- items may fall in different shards, so in one to a few calls.
-- KEYS: the hash. ARGV[1]: JSON {expire_at: unix seconds, fields: [id, owner, id, owner, ...]}. Reply: nothing.
--#include helpers/args.lua
redis.call('HSET', KEYS[1], unpack(A.fields))
redis.call('EXPIREAT', KEYS[1], A.expire_at)
