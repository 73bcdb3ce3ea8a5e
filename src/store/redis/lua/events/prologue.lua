-- Takes the event arguments and the outbox key off ARGV and KEYS; helpers to write an event and test balance.low.
local ev_n = tonumber(table.remove(ARGV))
local EV = {}
for i = #ARGV - ev_n + 1, #ARGV do EV[#EV + 1] = ARGV[i] end
for _ = 1, ev_n do table.remove(ARGV) end
local ev_stream = table.remove(KEYS)
local ev_slot = string.sub(ev_stream, 1, -3)
local ev_account = string.match(ev_stream, '{(.-)}')
local ev_written = 0
local function ev_emit(id, type, data)
  ev_written = ev_written + 1
  redis.call('XADD', ev_stream, '*', 'id', id, 'type', type, 'created', redis.call('TIME')[1], 'data', data)
end
-- balance.low: live packages less debt, against the account's threshold; written once per crossing below it, and
-- armed again only once the balance is back at or above it. EV: event id, default threshold.
local function ev_low_balance(id, default_threshold)
  local a = ev_slot .. 'a'
  local st = redis.call('HMGET', a, 'low_at', 'low', 'debt')
  if st[3] == false then return end
  local threshold = tonumber((st[1] and st[1] ~= '') and st[1] or default_threshold)
  local now = tonumber(redis.call('TIME')[1])
  local balance = -tonumber(st[3])
  for _, v in ipairs(redis.call('HVALS', ev_slot .. 'p')) do
    local rem, exp = string.match(v, '^(%d+):(%d+)')
    exp = tonumber(exp)
    if exp == 0 or exp > now then balance = balance + tonumber(rem) end
  end
  if balance < threshold then
    if st[2] ~= '1' then
      redis.call('HSET', a, 'low', '1')
      ev_emit(id, 'balance.low', string.format('{"account_id":"%s","balance":%d,"threshold":%d}', ev_account, balance, threshold))
    end
  elseif st[2] == '1' then
    redis.call('HDEL', a, 'low')
  end
end
-- budget.threshold (the period's charged tokens bs reached 80 % of the budget) and budget.exceeded (all of it, or the
-- budget refused a request: refused), each once per period per level: the level's hash h keeps the period start each
-- was last written for (bt, bx), so the next period arms both again. want: {threshold=, exceeded=}; starts: the
-- periods' starts {day=, week=, month=}; month_ends: the ends of this month and the next; id: a base event id.
local function ev_budget(h, level, key_id, want, starts, month_ends, id, refused)
  local c = redis.call('HMGET', h, 'bg', 'bp', 'bs', 'bt', 'bx')
  if not c[1] or c[1] == '' then return end
  local tokens, period = string.match(c[1], '^(%d+):(%a+)$')
  tokens = tonumber(tokens)
  local start, spent = tonumber(c[2] or '0'), tonumber(c[3] or '0')
  if start < starts[period] then
    if not refused then return end
    start, spent = starts[period], 0
  end
  local resets = start + 86400
  if period == 'week' then resets = start + 7 * 86400
  elseif period == 'month' then resets = (start == starts.month) and month_ends[1] or month_ends[2] end
  local data = string.format('{"account_id":"%s","key_id":%s,"level":"%s","tokens":%d,"period":"%s","spent":%d,"period_start":%d,"resets_at":%d}',
    ev_account, level == 'key' and ('"' .. key_id .. '"') or 'null', level, tokens, period, spent, start, resets)
  if want.threshold and not refused and spent * 5 >= tokens * 4 and tonumber(c[4] or '0') ~= start then
    redis.call('HSET', h, 'bt', start)
    ev_emit(id .. level:sub(1, 1) .. 't', 'budget.threshold', data)
  end
  if want.exceeded and (refused or spent >= tokens) and tonumber(c[5] or '0') ~= start then
    redis.call('HSET', h, 'bx', start)
    ev_emit(id .. level:sub(1, 1) .. 'x', 'budget.exceeded', data)
  end
end
