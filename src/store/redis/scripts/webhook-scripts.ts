/**
 * The webhook store's Lua scripts, one per check-and-change. Every key shares the hash tag `{wh}`, so each script
 * runs on one slot, on Redis and Redis Cluster alike (the per-endpoint and per-delivery names are built in the
 * script from ARGV base, always under that tag).
 *
 * Layout (prefix omitted; E an endpoint id, D a delivery id):
 *   {wh}:eps   HASH   endpoint id -> endpoint JSON (url, types, secret, created)
 *   {wh}:seq   STRING the order of queued deliveries
 *   {wh}:q:E   ZSET   E's pending delivery ids, scored by seq (the head is delivered first)
 *   {wh}:h:E   ZSET   E's kept delivery ids, pending and ended, scored by seq
 *   {wh}:x:E   ZSET   E's kept ended delivery ids, scored by seq (what is trimmed: pending ones are always kept)
 *   {wh}:s:E   HASH   event id -> delivery id: an event is queued once per endpoint
 *   {wh}:d:D   HASH   endpoint event type body status created next (next: due time in ms, 0 once ended)
 *   {wh}:a:D   LIST   D's attempts, JSON, oldest first
 *   {wh}:l:E   STRING the delivery lease's owner (PX)
 *   {wh}:le:E  STRING E's last failed attempt, JSON (kept after later successes, for the operator)
 * Endpoint changes are published on the channel {wh}:changed (every process refreshes what it writes).
 */

/**
 * ENQUEUE: queues events for an existing endpoint, in the order given, each once per event id. KEYS: eps seq.
 * ARGV: base ("<prefix>{wh}:"), endpoint id, created (s), then per event: event id, delivery id, type, body.
 * Reply: how many were queued (0 for an unknown endpoint). Constant work per event whatever the backlog: the history
 * is trimmed as deliveries end (RECORD_ATTEMPT), never scanned here.
 */
export const ENQUEUE = `
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
`;

/**
 * RECORD_ATTEMPT: appends one attempt (a single event's POST, or a batch's) to each of its pending deliveries;
 * delivered or failed, a delivery leaves its endpoint's queue and joins the ended ones, of which the oldest past keep
 * are dropped (their event may be queued again then). A failed attempt ('1') is also kept as the endpoint's last
 * error. KEYS: none. ARGV: base, attempt JSON, '1' failed, keep, then per delivery: id, outcome (delivered|retry|
 * failed), retry at (ms). Reply: how many were pending and recorded.
 */
export const RECORD_ATTEMPT = `
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
`;

/**
 * REDELIVER: queues an ended delivery again, due now, behind what is pending. KEYS: seq. ARGV: base, delivery id.
 * Reply: 1 queued, 0 unknown or still pending.
 */
export const REDELIVER = `
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
`;

/**
 * DELETE_ENDPOINT: removes an endpoint with its queue, history and deliveries. KEYS: eps. ARGV: base, endpoint id.
 * Reply: 1 removed, 0 unknown.
 */
export const DELETE_ENDPOINT = `
local base, e = ARGV[1], ARGV[2]
if redis.call('HDEL', KEYS[1], e) == 0 then return 0 end
for _, d in ipairs(redis.call('ZRANGE', base .. 'h:' .. e, 0, -1)) do redis.call('DEL', base .. 'd:' .. d, base .. 'a:' .. d) end
redis.call('DEL', base .. 'q:' .. e, base .. 'h:' .. e, base .. 'x:' .. e, base .. 's:' .. e, base .. 'l:' .. e, base .. 'le:' .. e)
return 1
`;

/**
 * LEASE: takes the endpoint's delivery lease, or extends it for its holder. Guarantees: one owner at a time, so two
 * processes never deliver to one endpoint at once. KEYS: lease. ARGV: owner, ms. Reply: 1 held, 0 held by another.
 */
export const LEASE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** UNLEASE: lets the lease go, if this owner holds it. KEYS: lease. ARGV: owner. Reply: 1 let go, 0 not held. */
export const UNLEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
