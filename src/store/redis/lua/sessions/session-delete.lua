-- SESSION_DELETE: ends one session. KEYS: session, set. ARGV: hash. Reply: 1 deleted, 0 there was none.
redis.call('SREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
