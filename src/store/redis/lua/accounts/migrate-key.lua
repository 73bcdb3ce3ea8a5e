-- MIGRATE_KEY: turns one key of the layout before accounts ({K}:k holding the key, its debt and reservations) into an
-- account of its own whose id is the key's id, so packages {K}:p, reservations {K}:r/{K}:ra, settle markers {K}:s:R,
-- ledger {K}:u and totals {K}:t are already where the account keeps them and nothing moves between slots.
-- Idempotent: an account that exists is left alone, so processes starting together may all run it.
-- KEYS: old k, a, new k, keys, ra, t, u. ARGV: key id. Reply: 1 migrated, 0 already, -1 no such old key.
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
