-- REDELIVER: queues an ended delivery again, due now, behind what is pending. KEYS: seq. ARGV: base, delivery id.
-- Reply: 1 queued, 0 unknown or still pending.
local base, d = ARGV[1], ARGV[2]
local dk = base .. 'd:' .. d
local state = redis.call('HMGET', dk, 'status', 'endpoint')
if not state[1] or state[1] == 'pending' then return 0 end
local t = redis.call('TIME')
local seq = redis.call('INCR', KEYS[1])
redis.call('HSET', dk, 'status', 'pending', 'next', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('ZADD', base .. 'q:' .. state[2], seq, d)
redis.call('ZADD', base .. 'h:' .. state[2], seq, d)
redis.call('ZREM', base .. 'x:' .. state[2], d)
return 1
