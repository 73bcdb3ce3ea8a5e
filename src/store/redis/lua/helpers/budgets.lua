-- budget_of(h, bg, starts): the level's budget, or nil without one: {h, tokens, period, start (the period in force),
-- used (bs + bh there), fresh (the counters are of an earlier period)}. starts: {day=, week=, month=} as numbers.
-- budget_hold(b, amount): counts an admitted reservation; returns the period start it counted in.
-- budget_charge(b, counted, charged): charges a settled request in the period its reservation counted in (counted),
-- or, when it counted in none ('' or '0': its lease lapsed, or the budget came after), in the period in force.
local function budget_of(h, bg, starts)
  if not bg or bg == '' then return nil end
  local tokens, period = string.match(bg, '^(%d+):(%a+)$')
  local now_start = starts[period]
  local c = redis.call('HMGET', h, 'bp', 'bs', 'bh')
  local bp = tonumber(c[1] or '0')
  local b = { h = h, tokens = tonumber(tokens), period = period, start = now_start, used = 0, fresh = bp < now_start }
  if not b.fresh then
    b.start = bp
    b.used = tonumber(c[2] or '0') + tonumber(c[3] or '0')
  end
  return b
end
local function budget_hold(b, amount)
  if b.fresh then redis.call('HSET', b.h, 'bp', b.start, 'bs', 0, 'bh', amount)
  else redis.call('HINCRBY', b.h, 'bh', amount) end
  return b.start
end
local function budget_charge(b, counted, charged)
  if counted ~= '' and counted ~= '0' and tonumber(counted) ~= b.start then return end
  if b.fresh then redis.call('HSET', b.h, 'bp', b.start, 'bs', charged, 'bh', 0)
  else redis.call('HINCRBY', b.h, 'bs', charged) end
end
