/**
 * The metering path's Lua scripts: reserve, renew, release and settle, each one atomic step on the account's slot
 * (layout and shared prologue: scripts.ts).
 */
import { BUDGET_FUNCTIONS } from './budget-scripts';
import { ACCOUNT_LEVELS } from './limit-scripts';
import { NOW_AND_PURGE } from './layout';
import { ROLLUP, SETTLED_MARKS } from './ledger-scripts';

/**
 * RESERVE: checks the key (when there is one) is live and allowed the model and the account is active, then
 * reserves fixed + per × unit tokens, where per is the largest completion allowance (≤ ARGV allowance) that both the
 * account's balance and the key's cap (cap − spent − reserved on the key) cover. Refuses when they cannot cover
 * fixed + unit. A request id that already holds a reservation has it replaced (or, when refused, dropped).
 * The key's and the account's budgets, when they have one, lower per as the balance does (key first), and refuse
 * when what is left of one cannot cover fixed + unit.
 * Then the key's and the account's rate and concurrency limits, when they have any, count the reservation (amount):
 * every level is checked before any is changed, so a refusal counts nowhere; the budgets count it last.
 * Guarantees: reservations never exceed the account's balance nor any key's cap nor any budget, however many proxies
 * reserve at once; a disabled account is refused at once, on every process; no level ever admits past its limits
 * (limit-scripts.ts).
 * KEYS: a k p r ra (k: the key's hash; any name in the slot when ARGV key id is ""). ARGV: request id, fixed, unit,
 * allowance, lease ms, model, key id, limit window ms, default allowance ('1': tpm limits may lower it), and the
 * budgets' current day, week and month starts.
 * Reply: {'ok', per, amount, [level name, lim_use...]...} | {'short', available, 'account'|'key'} |
 * {'budget', 'key'|'account', tokens, period, used, period start, requested} |
 * {'limited', level name, amount, lim_check's refusal..., lim_use...} | {'invalid', reason} | {'account', reason} | {'model'}.
 */
export const RESERVE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}${BUDGET_FUNCTIONS}
local key_id = ARGV[7]
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
if key and key[3] ~= '' and not string.find(key[3], '\\n' .. ARGV[6] .. '\\n', 1, true) then return {'model'} end
purge(KEYS[1], KEYS[4], KEYS[5])
local levels = account_levels(key and key[5], account[3], key_id)
local window_ms, lease_ms = tonumber(ARGV[8]), tonumber(ARGV[5])
-- A request that reserves again (with a better prompt count) replaces what it holds; refused, it holds nothing.
local prior = drop_reservation(KEYS[1], KEYS[4], KEYS[5], ARGV[1])
local function refused(reply)
  if prior then levels_end(levels, ARGV[1], 'undo', 0, window_ms) end
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
local fixed, unit, allowance = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if available < fixed + unit then return refused({'short', available, limited_by}) end
-- Budgets count like the balance: the allowance is lowered to what the tightest leaves, refused below one token.
local budgets = nil
if (key and key[6] or '') ~= '' or (account[4] or '') ~= '' then
  local starts = { day = tonumber(ARGV[10]), week = tonumber(ARGV[11]), month = tonumber(ARGV[12]) }
  budgets = { key = key and budget_of(KEYS[2], key[6], starts), account = budget_of(KEYS[1], account[4], starts) }
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
if levels and ARGV[9] == '1' and unit > 0 then
  -- A default allowance (no max_tokens) is lowered to what each tpm could ever admit, as the balance lowers it.
  for _, l in ipairs(levels) do
    if l.tpm > 0 then per = math.max(1, math.min(per, math.floor((l.tpm - fixed) / unit))) end
  end
end
local amount = math.ceil(fixed + per * unit)
if levels then
  for _, l in ipairs(levels) do
    lim_purge(l.w, l.t, l.c, now_ms, window_ms)
    local over = lim_check(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, ARGV[1], amount, now_ms, window_ms)
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
redis.call('ZADD', KEYS[4], now_ms + lease_ms, ARGV[1])
redis.call('HSET', KEYS[5], ARGV[1], amount .. ':' .. key_id .. counted)
redis.call('HINCRBY', KEYS[1], 'reserved', amount)
if key then redis.call('HINCRBY', KEYS[2], 'reserved', amount) end
local reply = {'ok', per, amount}
if levels then
  for _, l in ipairs(levels) do
    lim_commit(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, ARGV[1], amount, now_ms, window_ms, lease_ms)
    reply[#reply + 1] = l.name
    for _, v in ipairs(lim_use(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, now_ms, window_ms)) do reply[#reply + 1] = v end
  end
end
return reply
`;

/**
 * RENEW: pushes a live reservation's lease deadline forward, and its concurrency slots' on the key and account
 * levels. Never resurrects one that is gone. KEYS: a r ra. ARGV: request id, lease ms. Reply: 1 renewed, 0 gone.
 */
export const RENEW = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}
local lease_ms = tonumber(ARGV[2])
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], 'XX', now_ms + lease_ms, ARGV[1])
local held = redis.call('HGET', KEYS[3], ARGV[1])
local levels = levels_of(held and string.match(held, '^%d+:([^:]*)') or '')
if levels then
  for _, l in ipairs(levels) do
    if l.cc > 0 and redis.call('ZADD', l.c, 'XX', 'CH', now_ms + lease_ms, ARGV[1]) == 1 and redis.call('PTTL', l.c) < lease_ms then
      redis.call('PEXPIRE', l.c, lease_ms)
    end
  end
end
return 1
`;

/**
 * RELEASE: returns a reservation to the account (and its key), charging nothing; on the key and account levels the
 * slot is freed and tpm corrected to 0 (the request still counts as a request); budgets get back what it held.
 * Idempotent.
 * KEYS: a r ra. ARGV: request id, limit window ms. Reply: 1 released, 0 nothing held.
 */
export const RELEASE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}
local held = redis.call('HGET', KEYS[3], ARGV[1])
if not held then return 0 end
levels_end(levels_of(string.match(held, '^%d+:([^:]*)')), ARGV[1], 'release', 0, tonumber(ARGV[2]))
drop_reservation(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
return 1
`;

/**
 * SETTLE: exactly once per request id, drops the reservation, charges the account's packages that expire first (debt
 * for any shortfall) and the key's spend, appends the ledger record (account and key) and adds to the totals, all in
 * one step: ledger, balance and caps always agree. On the key and account levels the slot is freed and tpm corrected
 * to the charged tokens; their budgets are charged (budget_charge).
 * Exactly once: the request is marked settled in the hash of the hour it settles in ({A}:sh:<hour>, which outlives
 * its hour by ttl), and a retry up to ttl later looks in every hour bucket since then, so a retry landing in a later
 * hour is still refused; a marker of the old layout (the per-request key {A}:s:R, KEYS[6]) counts until it expires,
 * so an upgrade mid-request cannot charge twice. The same step adds the request to the account's rollup of its UTC
 * day ({A}:d:<day>: per model and per key, see ROLLUP), so daily totals never read the ledger.
 * KEYS: a k p r ra marker u t. ARGV: request id, charged, prompt, completion, model, estimated, stream, status, ttl,
 * key id, limit window ms, the budgets' current day, week and month starts, endpoint, cached, reasoning (the ledger
 * and the totals take these two only when not 0), tool calls, tool tokens, the request id in base64url when it is a
 * UUID ("" otherwise: the ledger keeps it as `rid`, 22 characters, else as `request_id`). Reply: {'ok', stream id, the account's balance after the charge
 * (live packages less debt and open reservations)} | {'duplicate'}.
 */
export const SETTLE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}${BUDGET_FUNCTIONS}${SETTLED_MARKS}${ROLLUP}
local mark, ttl = settled_mark(ARGV[1]), tonumber(ARGV[9])
-- A request that still holds its reservation was never settled: every SETTLE drops it in this same step (and RESERVE
-- is never sent again once a request settled). Only one without it (a retry, a journal replay, a lease run out) looks
-- through the markers: 25 hour buckets, which doubled the step's time in Redis when every SETTLE read them.
if redis.call('HEXISTS', KEYS[5], ARGV[1]) == 0 and (redis.call('EXISTS', KEYS[6]) == 1 or settled_before(mark, ttl)) then
  return {'duplicate'}
end
local flags = level_flags(ARGV[10])
levels_end(flags.levels, ARGV[1], 'settle', tonumber(ARGV[2]), tonumber(ARGV[11]))
local counted = drop_reservation(KEYS[1], KEYS[4], KEYS[5], ARGV[1]) or {'', ''}
if flags.key_bg ~= '' or flags.account_bg ~= '' then
  local starts = { day = tonumber(ARGV[12]), week = tonumber(ARGV[13]), month = tonumber(ARGV[14]) }
  local charged = tonumber(ARGV[2])
  local b = budget_of(KEYS[1], flags.account_bg, starts)
  if b then budget_charge(b, counted[1], charged) end
  b = budget_of(KEYS[2], flags.key_bg, starts)
  if b then budget_charge(b, counted[2], charged) end
end
local left = tonumber(ARGV[2])
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
-- ARGV[20]: a UUID request id's 16 bytes in base64url (22 characters, not 36), kept as rid; "" for any other id.
local rid = ARGV[20]
local entry = {(rid and rid ~= '') and 'rid' or 'request_id', (rid and rid ~= '') and rid or ARGV[1], 'key_id', ARGV[10], 'model', ARGV[5], 'prompt_tokens', ARGV[3], 'completion_tokens', ARGV[4],
  'charged_tokens', ARGV[2], 'estimated', ARGV[6], 'stream', ARGV[7], 'status', ARGV[8], 'endpoint', ARGV[15]}
local cached, reasoning = ARGV[16], ARGV[17]
if cached ~= '0' then entry[#entry + 1] = 'cached_tokens'; entry[#entry + 1] = cached end
if reasoning ~= '0' then entry[#entry + 1] = 'reasoning_tokens'; entry[#entry + 1] = reasoning end
-- The hosted tool line (ARGV[18] calls, ARGV[19] tokens, both already in charged): only when not 0.
if ARGV[18] and ARGV[18] ~= '0' then
  entry[#entry + 1] = 'tool_calls'; entry[#entry + 1] = ARGV[18]
  entry[#entry + 1] = 'tool_tokens'; entry[#entry + 1] = ARGV[19]
end
local id = redis.call('XADD', KEYS[7], '*', unpack(entry))
local function add_totals(h)
  redis.call('HINCRBY', h, 'requests', 1)
  redis.call('HINCRBY', h, 'prompt_tokens', ARGV[3])
  redis.call('HINCRBY', h, 'completion_tokens', ARGV[4])
  if cached ~= '0' then redis.call('HINCRBY', h, 'cached_tokens', cached) end
  if reasoning ~= '0' then redis.call('HINCRBY', h, 'reasoning_tokens', reasoning) end
end
add_totals(KEYS[8])
redis.call('HINCRBY', KEYS[8], 'charged_tokens', ARGV[2])
if ARGV[10] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then
  add_totals(KEYS[2])
  redis.call('HINCRBY', KEYS[2], 'spent', ARGV[2])
  redis.call('HSET', KEYS[2], 'last_used', now_s)
end
settle_mark(mark, ttl)
local held = redis.call('HMGET', KEYS[1], 'debt', 'reserved', 'ru')
roll_up(held[3], ARGV[5], ARGV[10], {1, ARGV[3], ARGV[4], cached, reasoning, ARGV[2]})
return {'ok', id, unspent - tonumber(held[1] or 0) - tonumber(held[2] or 0)}
`;
