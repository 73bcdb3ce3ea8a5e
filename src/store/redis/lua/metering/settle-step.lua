-- One settlement (SETTLE's whole step: settle.lua), as a function of its keys and input, so that a group of them runs
-- in one script (settle-group.lua). KEYS and A as settle.lua says; the reply as its reply.
local function settle_step(KEYS, A)
  local ttl = A.ttl
  -- A request that still holds its reservation was never settled: every SETTLE drops it in this same step (and RESERVE
  -- is never sent again once a request settled). Only one without it (a retry, a journal replay, a lease run out) looks
  -- through the markers: one hour bucket per hour since it was made (25 for an id that does not say when).
  local held = redis.call('HGET', KEYS[5], A.id)
  if not held and (redis.call('EXISTS', KEYS[6]) == 1 or settled_before(A.id, ttl, A.skew)) then
    return {'duplicate'}
  end
  -- The key's and the account's levels and budgets in one read of each hash, with what the reply's balance needs of
  -- the account (its debt and reservations before this step) and whether the key still exists (`created`).
  local key_read = {false, false, false}
  if A.key_id ~= '' then key_read = redis.call('HMGET', KEYS[2], 'rl', 'bg', 'created') end
  local account = redis.call('HMGET', KEYS[1], 'rl', 'bg', 'debt', 'reserved', 'rc')
  levels_end(account_levels(key_read[1], account[1], A.key_id), A.id, 'settle', A.charged, A.window_ms)
  local counted = held and drop_held(KEYS[1], KEYS[4], KEYS[5], A.id, held) or {'', '', 0}
  local key_bg, account_bg = key_read[2] or '', account[2] or ''
  if key_bg ~= '' or account_bg ~= '' then
    local charged = A.charged
    local b = budget_of(KEYS[1], account_bg, A.starts)
    if b then budget_charge(b, counted[1], charged) end
    b = budget_of(KEYS[2], key_bg, A.starts)
    if b then budget_charge(b, counted[2], charged) end
  end
  local left = A.charged
  -- What the live packages hold after the charge, for the reply's balance (read on the way when packages are charged).
  local unspent
  if left > 0 then
    local flat = redis.call('HGETALL', KEYS[3])
    local live = {}
    unspent = 0
    for i = 1, #flat, 2 do
      local rem, exp, rest = string.match(flat[i + 1], '^(%d+):(%d+)(.*)$')
      rem, exp = tonumber(rem), tonumber(exp)
      if rem > 0 and (exp == 0 or exp > now_s) then
        live[#live + 1] = { id = flat[i], rem = rem, exp = exp, rest = rest, order = exp == 0 and math.huge or exp }
        unspent = unspent + rem
      end
    end
    table.sort(live, function(a, b)
      if a.order ~= b.order then return a.order < b.order end
      return a.id < b.id
    end)
    for i = 1, #live do
      if left == 0 then break end
      local pkg = live[i]
      local take = math.min(left, pkg.rem)
      left = left - take
      unspent = unspent - take
      redis.call('HSET', KEYS[3], pkg.id, string.format('%d:%d', pkg.rem - take, pkg.exp) .. pkg.rest)
    end
    if left > 0 then redis.call('HINCRBY', KEYS[1], 'debt', left) end
  else
    unspent = live_balance(KEYS[3])
  end
  local entry = {A.rid ~= '' and 'rid' or 'request_id', A.rid ~= '' and A.rid or A.id, A.kid ~= '' and 'kid' or 'key_id',
    A.kid ~= '' and A.kid or A.key_id, 'model', A.model,
    'prompt_tokens', A.prompt, 'completion_tokens', A.completion, 'charged_tokens', A.charged, 'estimated', A.estimated,
    'stream', A.stream, 'status', A.status, 'endpoint', A.endpoint}
  local cached, reasoning = A.cached, A.reasoning
  if cached ~= 0 then entry[#entry + 1] = 'cached_tokens'; entry[#entry + 1] = cached end
  if reasoning ~= 0 then entry[#entry + 1] = 'reasoning_tokens'; entry[#entry + 1] = reasoning end
  -- The hosted tool line (both already in charged): only when not 0.
  if A.tool_calls ~= 0 then
    entry[#entry + 1] = 'tool_calls'; entry[#entry + 1] = A.tool_calls
    entry[#entry + 1] = 'tool_tokens'; entry[#entry + 1] = A.tool_tokens
  end
  local id = redis.call('XADD', KEYS[7], '*', unpack(entry))
  local function add_totals(h)
    redis.call('HINCRBY', h, 'requests', 1)
    redis.call('HINCRBY', h, 'prompt_tokens', A.prompt)
    redis.call('HINCRBY', h, 'completion_tokens', A.completion)
    if cached ~= 0 then redis.call('HINCRBY', h, 'cached_tokens', cached) end
    if reasoning ~= 0 then redis.call('HINCRBY', h, 'reasoning_tokens', reasoning) end
  end
  add_totals(KEYS[8])
  redis.call('HINCRBY', KEYS[8], 'charged_tokens', A.charged)
  if key_read[3] then
    add_totals(KEYS[2])
    redis.call('HINCRBY', KEYS[2], 'spent', A.charged)
    redis.call('HSET', KEYS[2], 'last_used', now_s)
  end
  settle_mark(A.id, ttl)
  if not account[5] then
    -- The account's first settlement since rollups left this step: the follower starts after the record before this
    -- one (every record before it was rolled up by the step itself, or predates rollups). `ru`, the first day the
    -- rollups hold whole, as when they began: 0 for an account's first record, else the day after a ledger without them.
    local before = redis.call('XREVRANGE', KEYS[7], '(' .. id, '-', 'COUNT', 1)
    redis.call('HSET', KEYS[1], 'rc', before[1] and before[1][1] or '0-0')
    if not redis.call('HGET', KEYS[1], 'ru') then
      redis.call('HSET', KEYS[1], 'ru', before[1] and math.floor(now_s / 86400) + 1 or 0)
    end
  end
  -- The account's debt and reservations after this step: what they were, with the shortfall added and this request's
  -- reservation taken off.
  local debt = tonumber(account[3] or 0) + math.max(left, 0)
  local reserved = tonumber(account[4] or 0) - counted[3]
  return {'ok', id, unspent - debt - reserved}
end
