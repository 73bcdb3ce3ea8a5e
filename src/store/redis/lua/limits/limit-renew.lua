-- LIMIT_RENEW: pushes a request's concurrency lease forward; never brings back a slot that lapsed or was freed.
-- KEYS: lc. ARGV: request id, lease ms. Reply: 1 renewed, 0 gone.
--#include helpers/clock.lua
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now_ms + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
return 1
