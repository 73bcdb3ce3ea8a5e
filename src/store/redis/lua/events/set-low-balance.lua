-- SET_LOW_BALANCE: sets an existing account's balance.low threshold ("" for the default). KEYS: a. ARGV: tokens.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'low_at', ARGV[1])
return 1
