-- LEASE: takes the endpoint's delivery lease, or extends it for its holder. Guarantees: one owner at a time, so two
-- processes never deliver to one endpoint at once. KEYS: lease. ARGV: owner, ms. Reply: 1 held, 0 held by another.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
