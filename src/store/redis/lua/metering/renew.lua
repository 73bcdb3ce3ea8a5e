-- RENEW: pushes a live reservation's lease deadline forward, and its concurrency slots' on the key and account
-- levels. Never resurrects one that is gone. KEYS: a r ra. ARGV: request id, lease ms. Reply: 1 renewed, 0 gone.
--#include helpers/now-and-purge.lua
--#include helpers/account-levels.lua
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
