/**
 * Every Redis check-and-change tokenmeter makes, one Lua script each. All KEYS of a script belong to one API key and
 * share its hash tag `{<key id>}`, so each script runs atomically on a single node, on Redis and Redis Cluster alike.
 * Time comes from the server's TIME, so proxies with skewed clocks agree on leases and expiry.
 *
 * Layout, for key id K (prefix omitted):
 *   {K}:k   HASH  name prefix created expires_at revoked models debt reserved
 *               (models: "" for all, else "\n"-joined ids with leading and trailing "\n")
 *   {K}:p   HASH  package id -> "remaining:expires_at:tokens:created" (expires_at 0 = never)
 *   {K}:r   ZSET  request id -> lease deadline (ms)
 *   {K}:ra  HASH  request id -> reserved tokens
 *   {K}:s:R STRING settled marker of request R (expires after the dedup window)
 *   {K}:u   STREAM the usage ledger
 *   {K}:t   HASH  usage totals
 */

/** Shared prologue: server time, and dropping reservations whose lease ran out (KEYS[1]=k, [2]=r, [3]=ra). */
const NOW_AND_PURGE = `
local t = redis.call('TIME')
local now_s = tonumber(t[1])
local now_ms = now_s * 1000 + math.floor(tonumber(t[2]) / 1000)
local function purge(k, r, ra)
  local stale = redis.call('ZRANGEBYSCORE', r, '-inf', now_ms)
  if #stale == 0 then return end
  local freed = 0
  for i = 1, #stale do
    freed = freed + tonumber(redis.call('HGET', ra, stale[i]) or '0')
    redis.call('HDEL', ra, stale[i])
  end
  redis.call('ZREMRANGEBYSCORE', r, '-inf', now_ms)
  redis.call('HINCRBY', k, 'reserved', -freed)
end
local function drop_reservation(k, r, ra, id)
  local amount = redis.call('HGET', ra, id)
  if not amount then return 0 end
  redis.call('HDEL', ra, id)
  redis.call('ZREM', r, id)
  redis.call('HINCRBY', k, 'reserved', -tonumber(amount))
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
 * RESERVE: checks the key is live and allowed the model, then reserves fixed + per × unit tokens, where per is the
 * largest completion allowance (≤ ARGV allowance) the balance covers. Refuses when it cannot cover fixed + unit.
 * A request id that already holds a reservation has it replaced (or, when refused, dropped).
 * Guarantees: reservations never exceed the balance, however many proxies reserve at once.
 * KEYS: k p r ra. ARGV: request id, fixed, unit, allowance, lease ms, model.
 * Reply: {'ok', per, amount} | {'short', available} | {'invalid', reason} | {'model'}.
 */
export const RESERVE = `${NOW_AND_PURGE}
local key = redis.call('HMGET', KEYS[1], 'revoked', 'expires_at', 'models', 'debt', 'reserved')
if not key[1] then return {'invalid', 'not_found'} end
if key[1] ~= '0' then return {'invalid', 'revoked'} end
local expires = tonumber(key[2])
if expires > 0 and expires <= now_s then return {'invalid', 'expired'} end
if key[3] ~= '' and not string.find(key[3], '\\n' .. ARGV[6] .. '\\n', 1, true) then return {'model'} end
purge(KEYS[1], KEYS[3], KEYS[4])
-- A request that reserves again (with a better prompt count) replaces what it holds.
local prior = tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved'))
local available = live_balance(KEYS[2]) - tonumber(key[4]) - reserved + prior
local fixed, unit, allowance = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if available < fixed + unit then
  drop_reservation(KEYS[1], KEYS[3], KEYS[4], ARGV[1])
  return {'short', available}
end
local per = math.min(allowance, math.floor((available - fixed) / unit))
local amount = math.ceil(fixed + per * unit)
redis.call('ZADD', KEYS[3], now_ms + tonumber(ARGV[5]), ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], amount)
redis.call('HINCRBY', KEYS[1], 'reserved', amount - prior)
return {'ok', per, amount}
`;

/**
 * RENEW: pushes a live reservation's lease deadline forward. Never resurrects one that is gone.
 * KEYS: r. ARGV: request id, lease ms. Reply: 1 renewed, 0 gone.
 */
export const RENEW = `
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now_ms + tonumber(ARGV[2]), ARGV[1])
return 1
`;

/**
 * RELEASE: returns a reservation to the balance, charging nothing. Idempotent.
 * KEYS: k r ra. ARGV: request id. Reply: 1 released, 0 nothing held.
 */
export const RELEASE = `${NOW_AND_PURGE}
return drop_reservation(KEYS[1], KEYS[2], KEYS[3], ARGV[1])
`;

/**
 * SETTLE: exactly once per request id, drops the reservation, charges the packages that expire first (debt for any
 * shortfall), appends the ledger record and adds to the totals, all in one step: ledger and balance always agree.
 * KEYS: k p r ra marker u t. ARGV: request id, charged, prompt, completion, model, estimated, stream, status, ttl.
 * Reply: {'ok', stream id} | {'duplicate'}.
 */
export const SETTLE = `${NOW_AND_PURGE}
if redis.call('EXISTS', KEYS[5]) == 1 then return {'duplicate'} end
drop_reservation(KEYS[1], KEYS[3], KEYS[4], ARGV[1])
local left = tonumber(ARGV[2])
if left > 0 then
  local flat = redis.call('HGETALL', KEYS[2])
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
    redis.call('HSET', KEYS[2], pkg.id, string.format('%d:%d', pkg.rem - take, pkg.exp) .. pkg.rest)
  end
  if left > 0 then redis.call('HINCRBY', KEYS[1], 'debt', left) end
end
local id = redis.call('XADD', KEYS[6], '*',
  'request_id', ARGV[1], 'model', ARGV[5], 'prompt_tokens', ARGV[3], 'completion_tokens', ARGV[4],
  'charged_tokens', ARGV[2], 'estimated', ARGV[6], 'stream', ARGV[7], 'status', ARGV[8], 'created', now_s)
redis.call('HINCRBY', KEYS[7], 'requests', 1)
redis.call('HINCRBY', KEYS[7], 'prompt_tokens', ARGV[3])
redis.call('HINCRBY', KEYS[7], 'completion_tokens', ARGV[4])
redis.call('HINCRBY', KEYS[7], 'charged_tokens', ARGV[2])
redis.call('SET', KEYS[5], id, 'EX', ARGV[9])
return {'ok', id}
`;

/**
 * GRANT: adds a package to an existing key; any debt is paid from it first.
 * KEYS: k p. ARGV: package id, tokens, expires_at (0 never). Reply: {'ok', remaining, created} | {'not_found'}.
 */
export const GRANT = `
local t = redis.call('TIME')
local now_s = tonumber(t[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
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

/**
 * STATE: a consistent snapshot of one key after purging expired leases.
 * KEYS: k p r ra t. Reply: {key fields flat, packages flat, totals flat, now_s} | {} for an unknown key.
 */
export const STATE = `${NOW_AND_PURGE}
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
purge(KEYS[1], KEYS[3], KEYS[4])
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[5]), now_s }
`;
