-- ADVANCE_DAY: only while the caller holds the lease, moves the shipped day forward to ARGV day (never back).
-- KEYS: sl sc. ARGV: owner, day. Reply: 1 done, 0 lease lost.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local day = tonumber(ARGV[2])
local shipped = tonumber(redis.call('GET', KEYS[2]) or '')
if shipped == nil or day > shipped then redis.call('SET', KEYS[2], ARGV[2]) end
return 1
