-- One reservation (RESERVE's whole step: reserve.lua), as a function of its keys and input, so that a group of them
-- runs in one script (reserve-group.lua). KEYS and A as reserve.lua says; the reply as its reply.
local function reserve_step(KEYS, A)
  local key_id = A.key_id
  local key
  if key_id ~= '' then
    key = redis.call('HMGET', KEYS[2], 'revoked', 'expires_at', 'models', 'limit', 'rl', 'bg')
    if not key[1] then return {'invalid', 'not_found'} end
    if key[1] ~= '0' then return {'invalid', 'revoked'} end
    local expires = tonumber(key[2])
    if expires > 0 and expires <= now_s then return {'invalid', 'expired'} end
  end
  local account = redis.call('HMGET', KEYS[1], 'status', 'debt', 'rl', 'bg')
  if not account[1] then return {'account', 'not_found'} end
  if account[1] ~= 'active' then return {'account', 'disabled'} end
  if key and key[3] ~= '' and not string.find(key[3], '\n' .. A.model .. '\n', 1, true) then return {'model'} end
  purge(KEYS[1], KEYS[4], KEYS[5])
  local levels = account_levels(key and key[5], account[3], key_id)
  local window_ms, lease_ms = A.window_ms, A.lease_ms
  -- A request that reserves again (with a better prompt count) replaces what it holds; refused, it holds nothing.
  local prior = drop_reservation(KEYS[1], KEYS[4], KEYS[5], A.id)
  local function refused(reply)
    if prior then levels_end(levels, A.id, 'undo', 0, window_ms) end
    return reply
  end
  local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved'))
  local available = live_balance(KEYS[3]) - tonumber(account[2]) - reserved
  local limited_by = 'account'
  if key and key[4] ~= '' then
    local used = redis.call('HMGET', KEYS[2], 'spent', 'reserved')
    local cap_left = tonumber(key[4]) - tonumber(used[1]) - tonumber(used[2])
    if cap_left < available then
      available = cap_left
      limited_by = 'key'
    end
  end
  local fixed, unit, allowance = A.fixed, A.unit, A.allowance
  if available < fixed + unit then return refused({'short', available, limited_by}) end
  -- Budgets count like the balance: the allowance is lowered to what the tightest leaves, refused below one token.
  local budgets = nil
  if (key and key[6] or '') ~= '' or (account[4] or '') ~= '' then
    budgets = { key = key and budget_of(KEYS[2], key[6], A.starts), account = budget_of(KEYS[1], account[4], A.starts) }
    for _, name in ipairs({'key', 'account'}) do
      local b = budgets[name]
      if b then
        local left = b.tokens - b.used
        if left < fixed + unit then
          return refused({'budget', name, b.tokens, b.period, b.used, b.start, math.ceil(fixed + unit)})
        end
        if left < available then available = left end
      end
    end
  end
  -- No output (embeddings: unit 0): the reservation is the prompt's alone.
  local per = 0
  if unit > 0 then per = math.min(allowance, math.floor((available - fixed) / unit)) end
  if levels and A.default_allowance and unit > 0 then
    -- A default allowance (no max_tokens) is lowered to what each tpm could ever admit, as the balance lowers it.
    for _, l in ipairs(levels) do
      if l.tpm > 0 then per = math.max(1, math.min(per, math.floor((l.tpm - fixed) / unit))) end
    end
  end
  local amount = math.ceil(fixed + per * unit)
  if levels then
    for _, l in ipairs(levels) do
      lim_purge(l.w, l.t, l.c, now_ms, window_ms)
      local over = lim_check(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, A.id, amount, now_ms, window_ms)
      if over then
        local reply = {'limited', l.name, amount, unpack(over)}
        for _, v in ipairs(lim_use(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, now_ms, window_ms)) do reply[#reply + 1] = v end
        return refused(reply)
      end
    end
  end
  local counted = ''
  if budgets then
    local account_p, key_p = 0, 0
    if budgets.account then account_p = budget_hold(budgets.account, amount) end
    if budgets.key then key_p = budget_hold(budgets.key, amount) end
    counted = ':' .. account_p .. ':' .. key_p
  end
  redis.call('ZADD', KEYS[4], now_ms + lease_ms, A.id)
  redis.call('HSET', KEYS[5], A.id, amount .. ':' .. key_id .. counted)
  redis.call('HINCRBY', KEYS[1], 'reserved', amount)
  if key then redis.call('HINCRBY', KEYS[2], 'reserved', amount) end
  local reply = {'ok', per, amount}
  if levels then
    for _, l in ipairs(levels) do
      lim_commit(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, A.id, amount, now_ms, window_ms, lease_ms)
      reply[#reply + 1] = l.name
      for _, v in ipairs(lim_use(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, now_ms, window_ms)) do reply[#reply + 1] = v end
    end
  end
  return reply
end
