-- GRANT: adds a package to an existing account; any debt is paid from it first. With an idempotency id (once, "" for
-- none) the grant happens at most once per id: the marker is checked and set in this same step. Refused whole
-- when the account's live packages would then hold more than max_unspent (2^53 - 1): Lua's numbers are doubles,
-- exact up to there, and a sum that passes it rounds to at least 2^53, so the comparison itself stays right.
-- The account's lg is the grant's tokens: balance.low's default threshold is a share of the last grant.
-- KEYS: a p g. A: id (the package's), tokens, expires_at (0 never), once, max_unspent.
-- Reply: {'ok', remaining, created} | {'duplicate', package id, package value or false} | {'not_found'} | {'limit'}.
--#include helpers/args.lua
--#include helpers/now-and-purge.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
if A.once ~= '' then
  local earlier = redis.call('HGET', KEYS[3], A.once)
  if earlier then return {'duplicate', earlier, redis.call('HGET', KEYS[2], earlier)} end
end
local debt = tonumber(redis.call('HGET', KEYS[1], 'debt') or '0')
local tokens = A.tokens
local paid = math.min(debt, tokens)
local remaining = tokens - paid
if live_balance(KEYS[2]) + remaining > A.max_unspent then return {'limit'} end
if A.once ~= '' then redis.call('HSET', KEYS[3], A.once, A.id) end
if paid > 0 then redis.call('HINCRBY', KEYS[1], 'debt', -paid) end
redis.call('HSET', KEYS[1], 'lg', tokens)
redis.call('HSET', KEYS[2], A.id, string.format('%d:%d:%d:%d', remaining, A.expires_at, tokens, now_s))
return {'ok', remaining, now_s}
