-- GRANT: adds a package to an existing account; any debt is paid from it first. With an idempotency id (ARGV once,
-- "" for none) the grant happens at most once per id: the marker is checked and set in this same step. Refused whole
-- when the account's live packages would then hold more than ARGV max unspent (2^53 - 1): Lua's numbers are doubles,
-- exact up to there, and a sum that passes it rounds to at least 2^53, so the comparison itself stays right.
-- KEYS: a p g. ARGV: package id, tokens, expires_at (0 never), once, max unspent.
-- Reply: {'ok', remaining, created} | {'duplicate', package id, package value or false} | {'not_found'} | {'limit'}.
--#include helpers/now-and-purge.lua
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
