-- ATTEMPT_REFUND: gives back one attempt of the current window (never below zero, never reviving an ended window).
-- KEYS: bucket. Reply: 1.
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 1
