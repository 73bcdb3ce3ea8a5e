-- SHORTEN: a shipped day's shard hash expires at ARGV expire ms, only if it holds exactly ARGV n ids (those
-- PostgreSQL committed): an id written since is never dropped unshipped. KEYS: the hash. Reply: 1 done, 0 changed.
if redis.call('HLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
