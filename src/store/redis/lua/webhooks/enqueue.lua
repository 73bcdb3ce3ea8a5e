-- ENQUEUE: queues events for an existing endpoint, in the order given, each once per event id. KEYS: eps seq.
-- A: base ("<prefix>{wh}:"), endpoint (its id), created (s), events (each {id, delivery, type, body}).
-- Reply: how many were queued (0 for an unknown endpoint). Constant work per event whatever the backlog: the history
-- is trimmed as deliveries end (RECORD_ATTEMPT), never scanned here.
--#include helpers/args.lua
local base, e = A.base, A.endpoint
if redis.call('HEXISTS', KEYS[1], e) == 0 then return 0 end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local queued = 0
for _, event in ipairs(A.events) do
  local ev, d = event.id, event.delivery
  if redis.call('HSETNX', base .. 's:' .. e, ev, d) == 1 then
    local seq = redis.call('INCR', KEYS[2])
    redis.call('HSET', base .. 'd:' .. d, 'endpoint', e, 'event', ev, 'type', event.type, 'body', event.body,
      'status', 'pending', 'created', A.created, 'next', now_ms)
    redis.call('ZADD', base .. 'q:' .. e, seq, d)
    redis.call('ZADD', base .. 'h:' .. e, seq, d)
    queued = queued + 1
  end
end
return queued
