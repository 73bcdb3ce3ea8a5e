/**
 * The Redis side of rate and concurrency limits (kept apart from scripts.ts only for its length): Lua functions for
 * one level's windows, shared by RESERVE (key and account levels, in the account's slot) and by the model-level
 * scripts below (in the model's own slot). Each script is one atomic step; time is the server's TIME.
 *
 * A level L's keys, all under one hash tag:
 *   L:lw  ZSET  request id -> admission time (ms): the sliding window log of rpm and tpm
 *   L:lt  HASH  request id -> tokens counted against tpm; field '#' holds their sum (no request id is '#')
 *   L:lc  ZSET  request id -> lease deadline (ms): requests in flight, for max_concurrent
 * Limits come as ARGV numbers, 0 meaning "no such limit". Every key expires once idle (a window, or a lease).
 */
import { CONCURRENCY_RETRY_MS } from '../../../limits/limit-window';

/**
 * The level functions. lim_check refuses without changing anything; lim_commit counts an admitted request; so a
 * script can check every level before it changes any (a refusal at the last leaves no trace at the first).
 * Guarantees: never more than rpm admissions, nor more than tpm tokens, in any window of window_ms (a sliding log,
 * so no edge admits twice the limit), and never more than max_concurrent requests holding a live lease.
 */
export const LIMIT_FUNCTIONS = `
local function lim_purge(w, t, c, now_ms, window_ms)
  local cutoff = now_ms - window_ms
  local old = redis.call('ZRANGEBYSCORE', w, '-inf', cutoff)
  if #old > 0 then
    local freed = 0
    for i = 1, #old do
      local n = redis.call('HGET', t, old[i])
      if n then
        freed = freed + tonumber(n)
        redis.call('HDEL', t, old[i])
      end
    end
    redis.call('ZREMRANGEBYSCORE', w, '-inf', cutoff)
    if freed > 0 then redis.call('HINCRBY', t, '#', -freed) end
  end
  redis.call('ZREMRANGEBYSCORE', c, '-inf', now_ms)
end
-- nil when the request fits; else {kind, limit, used, retry_ms, too_large}.
local function lim_check(w, t, c, rpm, tpm, cc, id, tokens, now_ms, window_ms)
  -- A request that reserves again (a better prompt count) was counted already: it is not a second request.
  local held = redis.call('ZSCORE', w, id)
  if rpm > 0 and not held then
    local n = redis.call('ZCARD', w)
    if n >= rpm then
      local oldest = redis.call('ZRANGE', w, n - rpm, n - rpm, 'WITHSCORES')
      return {'requests', rpm, n, tonumber(oldest[2]) + window_ms - now_ms, 0}
    end
  end
  if tpm > 0 then
    local sum = tonumber(redis.call('HGET', t, '#') or '0')
    if tokens > tpm then return {'tokens', tpm, sum, window_ms, 1} end
    local used = sum - tonumber(redis.call('HGET', t, id) or '0')
    if used + tokens > tpm then
      -- When enough of the others' tokens will have left the window, oldest first.
      local need, freed, at = used + tokens - tpm, 0, now_ms
      local entries = redis.call('ZRANGE', w, 0, -1, 'WITHSCORES')
      for i = 1, #entries, 2 do
        if entries[i] ~= id then
          freed = freed + tonumber(redis.call('HGET', t, entries[i]) or '0')
          if freed >= need then
            at = tonumber(entries[i + 1])
            break
          end
        end
      end
      return {'tokens', tpm, used, at + window_ms - now_ms, 0}
    end
  end
  if cc > 0 and not redis.call('ZSCORE', c, id) then
    local n = redis.call('ZCARD', c)
    if n >= cc then return {'concurrent', cc, n, ${CONCURRENCY_RETRY_MS}, 0} end
  end
  return nil
end
local function lim_commit(w, t, c, rpm, tpm, cc, id, tokens, now_ms, window_ms, lease_ms)
  if rpm > 0 or tpm > 0 then
    redis.call('ZADD', w, 'NX', now_ms, id)
    redis.call('PEXPIRE', w, window_ms)
    if tpm > 0 then
      local prior = tonumber(redis.call('HGET', t, id) or '0')
      redis.call('HSET', t, id, tokens)
      redis.call('HINCRBY', t, '#', tokens - prior)
      redis.call('PEXPIRE', t, window_ms)
    end
  end
  if cc > 0 then
    redis.call('ZADD', c, now_ms + lease_ms, id)
    if redis.call('PTTL', c) < lease_ms then redis.call('PEXPIRE', c, lease_ms) end
  end
end
-- {rpm, requests in window, tpm, tokens in window, ms until the window is empty, max_concurrent, in flight}
local function lim_use(w, t, c, rpm, tpm, cc, now_ms, window_ms)
  local n = redis.call('ZCARD', w)
  local reset = 0
  if n > 0 then reset = tonumber(redis.call('ZRANGE', w, -1, -1, 'WITHSCORES')[2]) + window_ms - now_ms end
  local sum = 0
  if tpm > 0 then sum = tonumber(redis.call('HGET', t, '#') or '0') end
  local inflight = 0
  if cc > 0 then inflight = redis.call('ZCARD', c) end
  return {rpm, n, tpm, sum, reset, cc, inflight}
end
-- how: 'settle' (tpm corrected to tokens), 'release' (to 0), 'undo' (as if never admitted). The slot is freed.
local function lim_end(w, t, c, id, how, tokens)
  redis.call('ZREM', c, id)
  local prior = redis.call('HGET', t, id)
  if how == 'undo' then
    redis.call('ZREM', w, id)
    if prior then
      redis.call('HDEL', t, id)
      redis.call('HINCRBY', t, '#', -tonumber(prior))
    end
  elseif prior then
    if how == 'release' then tokens = 0 end
    redis.call('HSET', t, id, tokens)
    redis.call('HINCRBY', t, '#', tokens - tonumber(prior))
  end
end
`;

/**
 * The key and account levels, inside the account's slot (for RESERVE, SETTLE, RELEASE, RENEW and the state scripts,
 * after NOW_AND_PURGE). A level exists only when its hash's `rl` field is set ("rpm:tpm:max_concurrent"), so a
 * request on a key and account without limits costs one string comparison each. The level keys are named from the
 * account hash KEYS[1] ({A}:a): {A}:lw, {A}:lt, {A}:lc for the account, {A}:lw:K, {A}:lt:K, {A}:lc:K for key K.
 */
export const ACCOUNT_LEVELS = `${LIMIT_FUNCTIONS}
local level_base = string.sub(KEYS[1], 1, -2)
local function make_level(name, rl, suffix)
  local rpm, tpm, cc = string.match(rl, '^(%d+):(%d+):(%d+)$')
  return { name = name, w = level_base .. 'lw' .. suffix, t = level_base .. 'lt' .. suffix, c = level_base .. 'lc' .. suffix,
    rpm = tonumber(rpm), tpm = tonumber(tpm), cc = tonumber(cc) }
end
-- The levels that have limits (key first), or nil when neither has any.
local function account_levels(key_rl, account_rl, key_id)
  local levels = nil
  if key_rl and key_rl ~= '' and key_id ~= '' then levels = { make_level('key', key_rl, ':' .. key_id) } end
  if account_rl and account_rl ~= '' then
    levels = levels or {}
    levels[#levels + 1] = make_level('account', account_rl, '')
  end
  return levels
end
-- The levels of a request on key_id (or none), reading both flags.
local function levels_of(key_id)
  local key_rl = nil
  if key_id ~= '' then key_rl = redis.call('HGET', level_base .. 'k:' .. key_id, 'rl') end
  return account_levels(key_rl, redis.call('HGET', KEYS[1], 'rl'), key_id)
end
-- The same levels, and the budgets ('bg') of the key and the account ('' for none), in one read of each hash.
local function level_flags(key_id)
  local key_flags = {false, false}
  if key_id ~= '' then key_flags = redis.call('HMGET', level_base .. 'k:' .. key_id, 'rl', 'bg') end
  local account_flags = redis.call('HMGET', KEYS[1], 'rl', 'bg')
  return { levels = account_levels(key_flags[1], account_flags[1], key_id), key_bg = key_flags[2] or '', account_bg = account_flags[2] or '' }
end
local function levels_end(levels, id, how, tokens, window_ms)
  if not levels then return end
  for _, l in ipairs(levels) do
    lim_purge(l.w, l.t, l.c, now_ms, window_ms)
    lim_end(l.w, l.t, l.c, id, how, tokens)
  end
end
`;

const CLOCK = `
local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
`;

/**
 * LIMIT_ADMIT: admits a request into one level's windows (the model level), or refuses it with nothing changed.
 * KEYS: lw lt lc. ARGV: request id, tokens, lease ms, window ms, rpm, tpm, max_concurrent (0: none).
 * Reply: {'ok', use...} | {'limited', kind, limit, used, retry ms, too large, use...} (use as lim_use's).
 */
export const LIMIT_ADMIT = `${LIMIT_FUNCTIONS}${CLOCK}
local id, tokens, lease_ms, window_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local rpm, tpm, cc = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
lim_purge(KEYS[1], KEYS[2], KEYS[3], now_ms, window_ms)
local refused = lim_check(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, id, tokens, now_ms, window_ms)
if refused then
  local reply = {'limited', unpack(refused)}
  for _, v in ipairs(lim_use(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, now_ms, window_ms)) do reply[#reply + 1] = v end
  return reply
end
lim_commit(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, id, tokens, now_ms, window_ms, lease_ms)
local reply = {'ok'}
for _, v in ipairs(lim_use(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, now_ms, window_ms)) do reply[#reply + 1] = v end
return reply
`;

/**
 * LIMIT_END: a request lets go of one level (see lim_end). Idempotent for release and undo; a settle retried after
 * it landed sets the same count again. KEYS: lw lt lc. ARGV: request id, how, tokens, window ms. Reply: 1.
 */
export const LIMIT_END = `${LIMIT_FUNCTIONS}${CLOCK}
lim_purge(KEYS[1], KEYS[2], KEYS[3], now_ms, tonumber(ARGV[4]))
lim_end(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], tonumber(ARGV[3]))
return 1
`;

/**
 * LIMIT_RENEW: pushes a request's concurrency lease forward; never brings back a slot that lapsed or was freed.
 * KEYS: lc. ARGV: request id, lease ms. Reply: 1 renewed, 0 gone.
 */
export const LIMIT_RENEW = `${CLOCK}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now_ms + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
return 1
`;

/**
 * LIMIT_USE: one level's current use, after dropping what left the window or lapsed (for the admin API).
 * KEYS: lw lt lc. ARGV: window ms, rpm, tpm, max_concurrent. Reply: lim_use's list.
 */
export const LIMIT_USE = `${LIMIT_FUNCTIONS}${CLOCK}
local window_ms = tonumber(ARGV[1])
lim_purge(KEYS[1], KEYS[2], KEYS[3], now_ms, window_ms)
return lim_use(KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), now_ms, window_ms)
`;
