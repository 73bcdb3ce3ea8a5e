-- UPDATE_ACCOUNT: sets fields of an existing account (never creating one). KEYS: a. ARGV: field/value pairs.
-- Reply: the account hash, flat | {} for an unknown account.
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return redis.call('HGETALL', KEYS[1])
