-- RECORD_ATTEMPT: appends one attempt (a single event's POST, or a batch's) to each of its pending deliveries;
-- delivered or failed, a delivery leaves its endpoint's queue and joins the ended ones, of which the oldest past keep
-- are dropped (their event may be queued again then). A failed attempt is also kept as the endpoint's last
-- error. KEYS: none. A: base, attempt (JSON), failed (true or false), keep, deliveries (each {id, outcome
-- (delivered|retry|failed), retry_at (ms)}). Reply: how many were pending and recorded.
--#include helpers/args.lua
local base, attempt, failed, keep = A.base, A.attempt, A.failed, A.keep
local recorded = 0
for _, delivery in ipairs(A.deliveries) do
  local d, outcome = delivery.id, delivery.outcome
  local dk = base .. 'd:' .. d
  local state = redis.call('HMGET', dk, 'status', 'endpoint')
  if state[1] == 'pending' then
    recorded = recorded + 1
    local e = state[2]
    redis.call('RPUSH', base .. 'a:' .. d, attempt)
    if failed then redis.call('SET', base .. 'le:' .. e, attempt) end
    if outcome == 'retry' then
      redis.call('HSET', dk, 'next', delivery.retry_at)
    else
      redis.call('HSET', dk, 'status', outcome, 'next', 0)
      redis.call('ZREM', base .. 'q:' .. e, d)
      local x = base .. 'x:' .. e
      redis.call('ZADD', x, redis.call('ZSCORE', base .. 'h:' .. e, d) or 0, d)
      local excess = redis.call('ZCARD', x) - keep
      if excess > 0 then
        for _, old in ipairs(redis.call('ZRANGE', x, 0, excess - 1)) do
          redis.call('HDEL', base .. 's:' .. e, redis.call('HGET', base .. 'd:' .. old, 'event'))
          redis.call('DEL', base .. 'd:' .. old, base .. 'a:' .. old)
          redis.call('ZREM', base .. 'h:' .. e, old)
        end
        redis.call('ZREMRANGEBYRANK', x, 0, excess - 1)
      end
    end
  end
end
return recorded
