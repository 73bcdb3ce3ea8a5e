-- LEASE: takes the lease when free, or renews it for its owner. KEYS: sl. ARGV: owner, ms. Reply: 1 held, 0 another's.
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if held ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
