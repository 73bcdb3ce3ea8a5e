-- RELEASE: gives the lease up, only for its owner (a stopping shipper: another takes over at once). KEYS: sl. ARGV: owner.
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
