-- CODE_CREDITED: marks a claimed code's package as credited (never an unclaimed code's).
-- KEYS: code. Reply: 1 marked, 0 not claimed.
local by = redis.call('HGET', KEYS[1], 'redeemed_by')
if not by or by == '' then return 0 end
redis.call('HSET', KEYS[1], 'credited', 1)
return 1
