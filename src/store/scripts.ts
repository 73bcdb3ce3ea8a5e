import { ACCOUNT_LEVELS } from './limit-scripts';

/**
 * Every Redis check-and-change tokenmeter makes, one Lua script each (the model level of the limits: limit-scripts.ts). All KEYS of a script belong to one account and
 * share its hash tag `{<account id>}`, so each script runs atomically on a single node, on Redis and Redis Cluster
 * alike. Time comes from the server's TIME, so proxies with skewed clocks agree on leases and expiry.
 *
 * Layout, for account A and its key K (prefix omitted):
 *   {A}:a    HASH  email name password_hash role status created debt reserved ("" email/password_hash: none)
 *   {A}:k:K  HASH  hash name prefix created expires_at revoked models limit spent reserved last_used
 *                  requests prompt_tokens completion_tokens
 *                  (models: "" for all, else "\n"-joined ids with leading and trailing "\n"; limit: "" for no cap)
 *   {A}:keys SET   the account's key ids
 *   {A}:p    HASH  package id -> "remaining:expires_at:tokens:created" (expires_at 0 = never)
 *   {A}:g    HASH  grant idempotency id -> package id
 *   {A}:r    ZSET  request id -> lease deadline (ms)
 *   {A}:ra   HASH  request id -> "amount:key id" (key id "" for a request without a key)
 *   {A}:s:R  STRING settled marker of request R (expires after the dedup window)
 *   {A}:u    STREAM the usage ledger (key_id "" for a request without a key; absent in records from before accounts)
 *   {A}:t    HASH  the account's usage totals
 *   {A}:lw {A}:lt {A}:lc, {A}:lw:K {A}:lt:K {A}:lc:K  the account's and key K's rate-limit windows (limit-scripts.ts);
 *                  their limits are the `rl` field of {A}:a and {A}:k:K ("rpm:tpm:max_concurrent"; "" or absent: none)
 * Outside any account's slot, read by plain commands: h:<hash> ("K A", or "K" before accounts, where A = K),
 * ka (HASH key id -> account id), accounts (ZSET of account ids, all scored 0, read in lexical = creation order),
 * email:<email> (account id), schema (the layout version, "2" once the keys of before accounts are migrated).
 */

/**
 * Shared prologue: server time, and dropping reservations whose lease ran out. KEYS[1] is always the account hash
 * {A}:a, so a key's hash {A}:k:K is found from it: same slot, by construction.
 */
const NOW_AND_PURGE = `
local t = redis.call('TIME')
local now_s = tonumber(t[1])
local now_ms = now_s * 1000 + math.floor(tonumber(t[2]) / 1000)
local key_base = string.sub(KEYS[1], 1, -2) .. 'k:'
local function unhold(a, held)
  local amount, key = string.match(held, '^(%d+):(.*)$')
  amount = tonumber(amount)
  redis.call('HINCRBY', a, 'reserved', -amount)
  if key ~= '' then redis.call('HINCRBY', key_base .. key, 'reserved', -amount) end
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
local function drop_reservation(a, r, ra, id)
  local held = redis.call('HGET', ra, id)
  if not held then return 0 end
  redis.call('HDEL', ra, id)
  redis.call('ZREM', r, id)
  unhold(a, held)
  return 1
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
`;

/**
 * RESERVE: checks the key (when there is one) is live and allowed the model and the account is active, then
 * reserves fixed + per × unit tokens, where per is the largest completion allowance (≤ ARGV allowance) that both the
 * account's balance and the key's cap (cap − spent − reserved on the key) cover. Refuses when they cannot cover
 * fixed + unit. A request id that already holds a reservation has it replaced (or, when refused, dropped).
 * Then the key's and the account's rate and concurrency limits, when they have any, count the reservation (amount):
 * every level is checked before any is changed, so a refusal counts nowhere.
 * Guarantees: reservations never exceed the account's balance nor any key's cap, however many proxies reserve at once;
 * a disabled account is refused at once, on every process; no level ever admits past its limits (limit-scripts.ts).
 * KEYS: a k p r ra (k: the key's hash; any name in the slot when ARGV key id is ""). ARGV: request id, fixed, unit,
 * allowance, lease ms, model, key id, limit window ms, default allowance ('1': tpm limits may lower it).
 * Reply: {'ok', per, amount, [level name, lim_use...]...} | {'short', available, 'account'|'key'} |
 * {'limited', level name, amount, lim_check's refusal..., lim_use...} | {'invalid', reason} | {'account', reason} | {'model'}.
 */
export const RESERVE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}
local key_id = ARGV[7]
local key
if key_id ~= '' then
  key = redis.call('HMGET', KEYS[2], 'revoked', 'expires_at', 'models', 'limit', 'rl')
  if not key[1] then return {'invalid', 'not_found'} end
  if key[1] ~= '0' then return {'invalid', 'revoked'} end
  local expires = tonumber(key[2])
  if expires > 0 and expires <= now_s then return {'invalid', 'expired'} end
end
local account = redis.call('HMGET', KEYS[1], 'status', 'debt', 'rl')
if not account[1] then return {'account', 'not_found'} end
if account[1] ~= 'active' then return {'account', 'disabled'} end
if key and key[3] ~= '' and not string.find(key[3], '\\n' .. ARGV[6] .. '\\n', 1, true) then return {'model'} end
purge(KEYS[1], KEYS[4], KEYS[5])
local levels = account_levels(key and key[5], account[3], key_id)
local window_ms, lease_ms = tonumber(ARGV[8]), tonumber(ARGV[5])
-- A request that reserves again (with a better prompt count) replaces what it holds; refused, it holds nothing.
local prior = drop_reservation(KEYS[1], KEYS[4], KEYS[5], ARGV[1])
local function refused(reply)
  if prior == 1 then levels_end(levels, ARGV[1], 'undo', 0, window_ms) end
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
local per = math.min(allowance, math.floor((available - fixed) / unit))
if levels and ARGV[9] == '1' then
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
redis.call('ZADD', KEYS[4], now_ms + lease_ms, ARGV[1])
redis.call('HSET', KEYS[5], ARGV[1], amount .. ':' .. key_id)
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
local levels = levels_of(held and string.match(held, '^%d+:(.*)$') or '')
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
 * slot is freed and tpm corrected to 0 (the request still counts as a request). Idempotent.
 * KEYS: a r ra. ARGV: request id, limit window ms. Reply: 1 released, 0 nothing held.
 */
export const RELEASE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}
local held = redis.call('HGET', KEYS[3], ARGV[1])
if not held then return 0 end
levels_end(levels_of(string.match(held, '^%d+:(.*)$')), ARGV[1], 'release', 0, tonumber(ARGV[2]))
return drop_reservation(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
`;

/**
 * SETTLE: exactly once per request id, drops the reservation, charges the account's packages that expire first (debt
 * for any shortfall) and the key's spend, appends the ledger record (account and key) and adds to the totals, all in
 * one step: ledger, balance and caps always agree. On the key and account levels the slot is freed and tpm corrected
 * to the charged tokens.
 * KEYS: a k p r ra marker u t. ARGV: request id, charged, prompt, completion, model, estimated, stream, status, ttl,
 * key id, limit window ms. Reply: {'ok', stream id} | {'duplicate'}.
 */
export const SETTLE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}
if redis.call('EXISTS', KEYS[6]) == 1 then return {'duplicate'} end
levels_end(levels_of(ARGV[10]), ARGV[1], 'settle', tonumber(ARGV[2]), tonumber(ARGV[11]))
drop_reservation(KEYS[1], KEYS[4], KEYS[5], ARGV[1])
local left = tonumber(ARGV[2])
if left > 0 then
  local flat = redis.call('HGETALL', KEYS[3])
  local live = {}
  for i = 1, #flat, 2 do
    local rem, exp, rest = string.match(flat[i + 1], '^(%d+):(%d+)(.*)$')
    rem, exp = tonumber(rem), tonumber(exp)
    if rem > 0 and (exp == 0 or exp > now_s) then
      live[#live + 1] = { id = flat[i], rem = rem, exp = exp, rest = rest, order = exp == 0 and math.huge or exp }
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
    redis.call('HSET', KEYS[3], pkg.id, string.format('%d:%d', pkg.rem - take, pkg.exp) .. pkg.rest)
  end
  if left > 0 then redis.call('HINCRBY', KEYS[1], 'debt', left) end
end
local id = redis.call('XADD', KEYS[7], '*',
  'request_id', ARGV[1], 'key_id', ARGV[10], 'model', ARGV[5], 'prompt_tokens', ARGV[3], 'completion_tokens', ARGV[4],
  'charged_tokens', ARGV[2], 'estimated', ARGV[6], 'stream', ARGV[7], 'status', ARGV[8], 'created', now_s)
local function add_totals(h)
  redis.call('HINCRBY', h, 'requests', 1)
  redis.call('HINCRBY', h, 'prompt_tokens', ARGV[3])
  redis.call('HINCRBY', h, 'completion_tokens', ARGV[4])
end
add_totals(KEYS[8])
redis.call('HINCRBY', KEYS[8], 'charged_tokens', ARGV[2])
if ARGV[10] ~= '' and redis.call('EXISTS', KEYS[2]) == 1 then
  add_totals(KEYS[2])
  redis.call('HINCRBY', KEYS[2], 'spent', ARGV[2])
  redis.call('HSET', KEYS[2], 'last_used', now_s)
end
redis.call('SET', KEYS[6], id, 'EX', ARGV[9])
return {'ok', id}
`;

/**
 * GRANT: adds a package to an existing account; any debt is paid from it first. With an idempotency id (ARGV once,
 * "" for none) the grant happens at most once per id: the marker is checked and set in this same step.
 * KEYS: a p g. ARGV: package id, tokens, expires_at (0 never), once.
 * Reply: {'ok', remaining, created} | {'duplicate', package id, package value or false} | {'not_found'}.
 */
export const GRANT = `
local t = redis.call('TIME')
local now_s = tonumber(t[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
if ARGV[4] ~= '' then
  local earlier = redis.call('HGET', KEYS[3], ARGV[4])
  if earlier then return {'duplicate', earlier, redis.call('HGET', KEYS[2], earlier)} end
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[1])
end
local debt = tonumber(redis.call('HGET', KEYS[1], 'debt') or '0')
local tokens = tonumber(ARGV[2])
local remaining = tokens
if debt > 0 then
  local paid = math.min(debt, tokens)
  remaining = tokens - paid
  redis.call('HINCRBY', KEYS[1], 'debt', -paid)
end
redis.call('HSET', KEYS[2], ARGV[1], string.format('%d:%d:%d:%d', remaining, tonumber(ARGV[3]), tokens, now_s))
return {'ok', remaining, now_s}
`;

/**
 * CREATE_KEY: adds a key to an existing account (the lookup indexes outside the slot are written after, by the caller,
 * so a half-made key is never reachable). KEYS: a k keys. ARGV: key id, then the key hash's field/value pairs.
 * Reply: 1 created, 0 unknown account.
 */
export const CREATE_KEY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
redis.call('SADD', KEYS[3], ARGV[1])
return 1
`;

/**
 * UPDATE_ACCOUNT: sets fields of an existing account (never creating one). KEYS: a. ARGV: field/value pairs.
 * Reply: the account hash, flat | {} for an unknown account.
 */
export const UPDATE_ACCOUNT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * REVOKE: marks a key revoked (first revocation time wins). Every later RESERVE refuses it at once.
 * KEYS: k. Reply: 1 revoked (now or before), 0 unknown key.
 */
export const REVOKE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'revoked') == '0' then
  redis.call('HSET', KEYS[1], 'revoked', redis.call('TIME')[1])
end
return 1
`;

/** The use of a level's limits (after dropping what left the window), or {} when it has none. */
const LEVEL_USE = `
local function level_use(levels, window_ms)
  if not levels then return {} end
  local l = levels[1]
  lim_purge(l.w, l.t, l.c, now_ms, window_ms)
  return lim_use(l.w, l.t, l.c, l.rpm, l.tpm, l.cc, now_ms, window_ms)
end
`;

/**
 * ACCOUNT_STATE: a consistent snapshot of one account after purging expired leases, with the use of its limits.
 * KEYS: a p r ra t. ARGV: limit window ms.
 * Reply: {account fields flat, packages flat, totals flat, now_s, lim_use or {}} | {} for an unknown account.
 */
export const ACCOUNT_STATE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}${LEVEL_USE}
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
purge(KEYS[1], KEYS[3], KEYS[4])
local use = level_use(account_levels(nil, redis.call('HGET', KEYS[1], 'rl'), ''), tonumber(ARGV[1]))
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[5]), now_s, use }
`;

/**
 * KEY_STATE: a consistent snapshot of one key and its account after purging expired leases, with the use of the
 * key's limits. KEYS: a k p r ra. ARGV: key id, limit window ms.
 * Reply: {account fields flat, key fields flat, packages flat, now_s, lim_use or {}} | {} for an unknown key.
 */
export const KEY_STATE = `${NOW_AND_PURGE}${ACCOUNT_LEVELS}${LEVEL_USE}
if redis.call('EXISTS', KEYS[2]) == 0 or redis.call('EXISTS', KEYS[1]) == 0 then return {} end
purge(KEYS[1], KEYS[4], KEYS[5])
local use = level_use(account_levels(redis.call('HGET', KEYS[2], 'rl'), nil, ARGV[1]), tonumber(ARGV[2]))
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), now_s, use }
`;

/**
 * MIGRATE_KEY: turns one key of the layout before accounts ({K}:k holding the key, its debt and reservations) into an
 * account of its own whose id is the key's id, so packages {K}:p, reservations {K}:r/{K}:ra, settle markers {K}:s:R,
 * ledger {K}:u and totals {K}:t are already where the account keeps them and nothing moves between slots.
 * Idempotent: an account that exists is left alone, so processes starting together may all run it.
 * KEYS: old k, a, new k, keys, ra, t, u. ARGV: key id. Reply: 1 migrated, 0 already, -1 no such old key.
 */
export const MIGRATE_KEY = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local flat = redis.call('HGETALL', KEYS[1])
local old = {}
for i = 1, #flat, 2 do old[flat[i]] = flat[i + 1] end
local totals = {}
flat = redis.call('HGETALL', KEYS[6])
for i = 1, #flat, 2 do totals[flat[i]] = flat[i + 1] end
local last = redis.call('XREVRANGE', KEYS[7], '+', '-', 'COUNT', 1)
local last_used = ''
if #last > 0 then
  local f = last[1][2]
  for i = 1, #f, 2 do if f[i] == 'created' then last_used = f[i + 1] end end
end
redis.call('HSET', KEYS[2], 'email', '', 'name', old.name or '', 'password_hash', '', 'role', 'member', 'status', 'active',
  'created', old.created or '0', 'debt', old.debt or '0', 'reserved', old.reserved or '0')
redis.call('HSET', KEYS[3], 'hash', old.hash or '', 'name', old.name or '', 'prefix', old.prefix or '',
  'created', old.created or '0', 'expires_at', old.expires_at or '0', 'revoked', old.revoked or '0', 'models', old.models or '',
  'limit', '', 'spent', totals.charged_tokens or '0', 'reserved', old.reserved or '0', 'last_used', last_used,
  'requests', totals.requests or '0', 'prompt_tokens', totals.prompt_tokens or '0',
  'completion_tokens', totals.completion_tokens or '0')
-- Open reservations now say which key holds them.
flat = redis.call('HGETALL', KEYS[5])
for i = 1, #flat, 2 do redis.call('HSET', KEYS[5], flat[i], flat[i + 1] .. ':' .. ARGV[1]) end
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[1])
return 1
`;
