-- ENQUEUE: queues events for an existing endpoint, in the order given, each once per event id. KEYS: eps seq.
-- ARGV: base ("<prefix>{wh}:"), endpoint id, created (s), then per event: event id, delivery id, type, body.
-- Reply: how many were queued (0 for an unknown endpoint). Constant work per event whatever the backlog: the history
-- is trimmed as deliveries end (RECORD_ATTEMPT), never scanned here.
local base, e = ARGV[1], ARGV[2]
if redis.call('HEXISTS', KEYS[1], e) == 0 then return 0 end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local queued = 0
for i = 4, #ARGV, 4 do
  local ev, d = ARGV[i], ARGV[i + 1]
  if redis.call('HSETNX', base .. 's:' .. e, ev, d) == 1 then
    local seq = redis.call('INCR', KEYS[2])
    redis.call('HSET', base .. 'd:' .. d, 'endpoint', e, 'event', ev, 'type', ARGV[i + 2], 'body', ARGV[i + 3],
      'status', 'pending', 'created', ARGV[3], 'next', now_ms)
    redis.call('ZADD', base .. 'q:' .. e, seq, d)
    redis.call('ZADD', base .. 'h:' .. e, seq, d)
    queued = queued + 1
  end
end
return queued
