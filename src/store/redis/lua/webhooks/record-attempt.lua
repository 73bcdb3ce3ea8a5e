-- RECORD_ATTEMPT: appends one attempt (a single event's POST, or a batch's) to each of its pending deliveries;
-- delivered or failed, a delivery leaves its endpoint's queue and joins the ended ones, of which the oldest past keep
-- are dropped (their event may be queued again then). A failed attempt ('1') is also kept as the endpoint's last
-- error. KEYS: none. ARGV: base, attempt JSON, '1' failed, keep, then per delivery: id, outcome (delivered|retry|
-- failed), retry at (ms). Reply: how many were pending and recorded.
local base, attempt, failed, keep = ARGV[1], ARGV[2], ARGV[3] == '1', tonumber(ARGV[4])
local recorded = 0
for i = 5, #ARGV, 3 do
  local d, outcome = ARGV[i], ARGV[i + 1]
  local dk = base .. 'd:' .. d
  local state = redis.call('HMGET', dk, 'status', 'endpoint')
  if state[1] == 'pending' then
    recorded = recorded + 1
    local e = state[2]
    redis.call('RPUSH', base .. 'a:' .. d, attempt)
    if failed then redis.call('SET', base .. 'le:' .. e, attempt) end
    if outcome == 'retry' then
      redis.call('HSET', dk, 'next', ARGV[i + 2])
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
