-- SESSION_DELETE_ALL: ends every session of an account in one step, so none survives a disable or password change.
-- KEYS: set. ARGV: the session key prefix ("<prefix>{A}:ss:"). Reply: sessions deleted.
local hashes = redis.call('SMEMBERS', KEYS[1])
local n = 0
for i = 1, #hashes do n = n + redis.call('DEL', ARGV[1] .. hashes[i]) end
redis.call('DEL', KEYS[1])
return n
