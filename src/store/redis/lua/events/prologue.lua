-- What a step that writes events (events/wrap.lua) shares: the account's outbox (the last KEY), the event arguments
-- (A.ev: one table per kind of event wanted, absent when not), writing an event, and the balance.low and budget tests.
-- Every payload is TypeScript's (src/store/records/events.ts): a value only this step knows (a balance, a budget's
-- spend) fills a "$name" slot of a template made there (helpers/fill.lua); no payload is written here.
--#include helpers/args.lua
--#include helpers/fill.lua
local EV = A.ev
local ev_stream = table.remove(KEYS)
local ev_slot = string.sub(ev_stream, 1, -3)
local ev_written = 0
local function ev_emit(id, type, data)
  ev_written = ev_written + 1
  redis.call('XADD', ev_stream, '*', 'id', id, 'type', type, 'created', redis.call('TIME')[1], 'data', data)
end
-- balance.low: live packages less debt, against the account's threshold: its own (low_at), else the default tokens,
-- else the default percent of its last grant (lg), rounded down; none for an account never granted anything (as
-- records/events.ts's lowBalanceThreshold). An account granted before lg was kept has its newest package (by its
-- created second) stand for its last grant, so an upgrade leaves none without a threshold. Written once per crossing
-- below it, and armed again only once the balance is back at or above it; a grant (credit) only arms it again.
-- low: {id, tokens (the default, "" for none), share (the default percent as {numerator, denominator}), data (slots:
-- balance, threshold)}.
local function ev_low_balance(low, credit)
  local a = ev_slot .. 'a'
  local st = redis.call('HMGET', a, 'low_at', 'low', 'debt', 'lg')
  if st[3] == false then return end
  local now = tonumber(redis.call('TIME')[1])
  local balance = -tonumber(st[3])
  local packages = redis.call('HVALS', ev_slot .. 'p')
  for _, v in ipairs(packages) do
    local rem, exp = string.match(v, '^(%d+):(%d+)')
    exp = tonumber(exp)
    if exp == 0 or exp > now then balance = balance + tonumber(rem) end
  end
  local threshold
  if st[1] and st[1] ~= '' then threshold = tonumber(st[1])
  elseif low.tokens ~= '' then threshold = low.tokens
  else
    local lg = st[4] and tonumber(st[4])
    if not lg then
      -- Only an account from before lg reads its packages again, for the newest one's tokens.
      local newest = -1
      for _, v in ipairs(packages) do
        local tokens, created = string.match(v, '^%d+:%d+:(%d+):?(%d*)')
        created = tonumber(created) or 0
        if tokens and created > newest then newest, lg = created, tonumber(tokens) end
      end
    end
    if lg then threshold = math.floor(lg * low.share.numerator / low.share.denominator) end
  end
  if threshold and balance < threshold then
    if st[2] ~= '1' and not credit then
      redis.call('HSET', a, 'low', '1')
      ev_emit(low.id, 'balance.low', fill(low.data, { balance = balance, threshold = threshold }))
    end
  elseif st[2] == '1' then
    redis.call('HDEL', a, 'low')
  end
end
-- budget.threshold (the period's charged tokens bs reached the share of the budget TypeScript gives) and
-- budget.exceeded (all of it, or the budget refused a request: refused), each once per period per level: the level's
-- hash h keeps the period start each was last written for (bt, bx), so the next period arms both again. budget: {id
-- (a base event id), threshold and exceeded (whether wanted), share {numerator, denominator}, ends (per period, the
-- ends of the current one and the next), data (per level, a template with slots tokens, period, spent, period_start,
-- resets_at)}; starts: the periods' starts {day, week, month}.
local function ev_budget(h, level, budget, starts, refused)
  local c = redis.call('HMGET', h, 'bg', 'bp', 'bs', 'bt', 'bx')
  if not c[1] or c[1] == '' then return end
  local tokens, period = string.match(c[1], '^(%d+):(%a+)$')
  tokens = tonumber(tokens)
  local start, spent = tonumber(c[2] or '0'), tonumber(c[3] or '0')
  if start < starts[period] then
    if not refused then return end
    start, spent = starts[period], 0
  end
  -- A period start past this process's (another's clock is ahead) is the next period.
  local resets = budget.ends[period][start == starts[period] and 1 or 2]
  local data = fill(budget.data[level],
    { tokens = tokens, period = period, spent = spent, period_start = start, resets_at = resets })
  local share = budget.share
  if budget.threshold and not refused and spent * share.denominator >= tokens * share.numerator
    and tonumber(c[4] or '0') ~= start then
    redis.call('HSET', h, 'bt', start)
    ev_emit(budget.id .. level:sub(1, 1) .. 't', 'budget.threshold', data)
  end
  if budget.exceeded and (refused or spent >= tokens) and tonumber(c[5] or '0') ~= start then
    redis.call('HSET', h, 'bx', start)
    ev_emit(budget.id .. level:sub(1, 1) .. 'x', 'budget.exceeded', data)
  end
end
