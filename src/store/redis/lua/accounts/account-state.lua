-- ACCOUNT_STATE: a consistent snapshot of one account after purging expired leases, with the use of its limits.
-- KEYS: a p r ra t. ARGV: limit window ms.
-- Reply: {account fields flat, packages flat, totals flat, now_s, lim_use or {}} | {} for an unknown account.
--#include helpers/now-and-purge.lua
--#include helpers/account-levels.lua
--#include helpers/level-use.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
purge(KEYS[1], KEYS[3], KEYS[4])
local use = level_use(account_levels(nil, redis.call('HGET', KEYS[1], 'rl'), ''), tonumber(ARGV[1]))
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[5]), now_s, use }
