-- ATTEMPT_TAKE: counts an attempt in a fixed window unless the window already holds the most allowed, so no more
-- than max attempts pass per window however many arrive at once.
-- KEYS: bucket. ARGV: window ms, max. Reply: {1} counted | {0, ms until the window ends}.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[2]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = tonumber(ARGV[1]) end
  return {0, ttl}
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {1}
