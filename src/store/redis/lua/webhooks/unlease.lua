-- UNLEASE: lets the lease go, if this owner holds it. KEYS: lease. ARGV: owner. Reply: 1 let go, 0 not held.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
