/**
 * The Lua scripts of accounts and keys: grants, key creation, account updates, revocation, reading an account's or a
 * key's state, and migrating a key from before accounts (layout and shared prologue: scripts.ts).
 */
import { ACCOUNT_LEVELS } from './limit-scripts';
import { NOW_AND_PURGE } from './layout';

/**
 * GRANT: adds a package to an existing account; any debt is paid from it first. With an idempotency id (ARGV once,
 * "" for none) the grant happens at most once per id: the marker is checked and set in this same step. Refused whole
 * when the account's live packages would then hold more than ARGV max unspent (2^53 - 1): Lua's numbers are doubles,
 * exact up to there, and a sum that passes it rounds to at least 2^53, so the comparison itself stays right.
 * KEYS: a p g. ARGV: package id, tokens, expires_at (0 never), once, max unspent.
 * Reply: {'ok', remaining, created} | {'duplicate', package id, package value or false} | {'not_found'} | {'limit'}.
 */
export const GRANT = `${NOW_AND_PURGE}
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
if ARGV[4] ~= '' then
  local earlier = redis.call('HGET', KEYS[3], ARGV[4])
  if earlier then return {'duplicate', earlier, redis.call('HGET', KEYS[2], earlier)} end
end
local debt = tonumber(redis.call('HGET', KEYS[1], 'debt') or '0')
local tokens = tonumber(ARGV[2])
local paid = math.min(debt, tokens)
local remaining = tokens - paid
if live_balance(KEYS[2]) + remaining > tonumber(ARGV[5]) then return {'limit'} end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], ARGV[4], ARGV[1]) end
if paid > 0 then redis.call('HINCRBY', KEYS[1], 'debt', -paid) end
redis.call('HSET', KEYS[2], ARGV[1], string.format('%d:%d:%d:%d', remaining, tonumber(ARGV[3]), tokens, now_s))
return {'ok', remaining, now_s}
`;

/**
 * CREATE_ACCOUNT: writes a new account's hash and, when it has a trial package (SIGNUP_TOKENS), the package and its
 * grant marker `signup`, in one step: the account never exists without its trial, and is made (and so granted) once.
 * Not yet reachable: the caller claims the email and lists the account after. KEYS: a p g. ARGV: package id ("" for
 * no trial), package value, then the account hash's field/value pairs. Reply: 1.
 */
export const CREATE_ACCOUNT = `
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
if ARGV[1] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('HSET', KEYS[3], 'signup', ARGV[1])
end
return 1
`;

/**
 * CREATE_KEY: adds a key to an existing account, unless the account already has ARGV max keys ("" for no limit):
 * counted in this same step, so keys created at once never pass it (revoked keys count: they are kept). The lookup
 * indexes outside the slot are written after, by the caller, so a half-made key is never reachable.
 * KEYS: a k keys. ARGV: key id, max keys, then the key hash's field/value pairs.
 * Reply: 1 created, 0 unknown account, -1 the account has max keys.
 */
export const CREATE_KEY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' and redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[2]) then return -1 end
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
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
