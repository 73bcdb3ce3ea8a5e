-- CODE_CLAIM: gives a code to the first account that claims it. Guarantees: one account per code, ever; that
-- account claiming again before the credit is confirmed gets it back ('resumed'), so a crash between the two steps
-- loses no credit; an expired code is never claimed.
-- KEYS: code. ARGV: account id. Reply: {'claimed'|'resumed', fields…} | {'used'} | {'expired'} | {'unknown'}.
local c = redis.call('HMGET', KEYS[1], 'redeemed_by', 'expires_at', 'credited')
if not c[1] then return {'unknown'} end
if c[1] ~= '' then
  if c[1] == ARGV[1] and c[3] == '0' then return {'resumed', unpack(redis.call('HGETALL', KEYS[1]))} end
  return {'used'}
end
local now = tonumber(redis.call('TIME')[1])
local expires = tonumber(c[2])
if expires > 0 and expires <= now then return {'expired'} end
redis.call('HSET', KEYS[1], 'redeemed_by', ARGV[1], 'redeemed_at', now)
return {'claimed', unpack(redis.call('HGETALL', KEYS[1]))}
