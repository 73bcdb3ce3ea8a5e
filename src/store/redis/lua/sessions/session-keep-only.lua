-- SESSION_KEEP_ONLY: ends every session of an account but one, and gives that one (if it still exists) a new stamp, in
-- one step: after a password change no other session survives, and the one it was made in goes on.
-- KEYS: set, the kept session. ARGV: kept hash, the session key prefix ("<prefix>{A}:ss:"), stamp. Reply: sessions ended.
local hashes = redis.call('SMEMBERS', KEYS[1])
local n = 0
for i = 1, #hashes do
  if hashes[i] ~= ARGV[1] then
    n = n + redis.call('DEL', ARGV[2] .. hashes[i])
    redis.call('SREM', KEYS[1], hashes[i])
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'stamp', ARGV[3]) end
return n
