-- KEY_STATE: a consistent snapshot of one key and its account after purging expired leases, with the use of the
-- key's limits. KEYS: a k p r ra. ARGV: key id, limit window ms.
-- Reply: {account fields flat, key fields flat, packages flat, now_s, lim_use or {}} | {} for an unknown key.
--#include helpers/now-and-purge.lua
--#include helpers/account-levels.lua
--#include helpers/level-use.lua
if redis.call('EXISTS', KEYS[2]) == 0 or redis.call('EXISTS', KEYS[1]) == 0 then return {} end
purge(KEYS[1], KEYS[4], KEYS[5])
local use = level_use(account_levels(redis.call('HGET', KEYS[2], 'rl'), nil, ARGV[1]), tonumber(ARGV[2]))
return { redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), now_s, use }
