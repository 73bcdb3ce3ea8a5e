-- Shared prologue: server time, and dropping reservations whose lease ran out. KEYS[1] is always the account hash
-- {A}:a, so a key's hash {A}:k:K is found from it: same slot, by construction.
local t = redis.call('TIME')
local now_s = tonumber(t[1])
local now_ms = now_s * 1000 + math.floor(tonumber(t[2]) / 1000)
local key_base = string.sub(KEYS[1], 1, -2) .. 'k:'
-- Gives back what a reservation held of a budget, when its period is still the one counted.
local function budget_unhold(h, counted, amount)
  if counted ~= '' and counted ~= '0' and tonumber(redis.call('HGET', h, 'bp')) == tonumber(counted) then
    redis.call('HINCRBY', h, 'bh', -amount)
  end
end
-- Returns a reservation's amount to its account and key (and budgets); the periods it counted in ('' for none), and
-- the amount.
local function unhold(a, held)
  local amount, key, account_p, key_p = string.match(held, '^(%d+):([^:]*):?(%d*):?(%d*)$')
  amount = tonumber(amount)
  redis.call('HINCRBY', a, 'reserved', -amount)
  if key ~= '' then redis.call('HINCRBY', key_base .. key, 'reserved', -amount) end
  if account_p ~= '' then
    budget_unhold(a, account_p, amount)
    if key ~= '' then budget_unhold(key_base .. key, key_p, amount) end
  end
  return account_p, key_p, amount
end
local function purge(a, r, ra)
  local stale = redis.call('ZRANGEBYSCORE', r, '-inf', now_ms)
  if #stale == 0 then return end
  for i = 1, #stale do
    local held = redis.call('HGET', ra, stale[i])
    if held then
      unhold(a, held)
      redis.call('HDEL', ra, stale[i])
    end
  end
  redis.call('ZREMRANGEBYSCORE', r, '-inf', now_ms)
end
-- Drops a reservation read as held (its value in ra): {the periods its budgets counted it in, its amount}.
local function drop_held(a, r, ra, id, held)
  redis.call('HDEL', ra, id)
  redis.call('ZREM', r, id)
  local account_p, key_p, amount = unhold(a, held)
  return {account_p, key_p, amount}
end
-- Drops a request's reservation; false when it held none, else what drop_held returns.
local function drop_reservation(a, r, ra, id)
  local held = redis.call('HGET', ra, id)
  if not held then return false end
  return drop_held(a, r, ra, id, held)
end
local function live_balance(p)
  local balance = 0
  local values = redis.call('HVALS', p)
  for i = 1, #values do
    local rem, exp = string.match(values[i], '^(%d+):(%d+)')
    exp = tonumber(exp)
    if exp == 0 or exp > now_s then balance = balance + tonumber(rem) end
  end
  return balance
end
