-- SESSION_CREATE: stores a session and adds it to its account's set.
-- KEYS: session, set. ARGV: hash, idle ms, stamp, lifetime ms ("" for none). Reply: 1.
local t = redis.call('TIME')
local now = tonumber(t[1])
local now_ms = now * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'created', now, 'created_ms', now_ms, 'last_seen', now, 'stamp', ARGV[3])
local ttl = tonumber(ARGV[2])
if ARGV[4] ~= '' and tonumber(ARGV[4]) < ttl then ttl = tonumber(ARGV[4]) end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('SADD', KEYS[2], ARGV[1])
-- Every member expires no later than idle ms from now, so the set may too (it is refreshed on each use).
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
