-- SESSION_TOUCH: reads a live session and pushes its idle expiry forward, never past its absolute lifetime; a session
-- past its idle time is gone, one past its lifetime is ended here, however recently it was used.
-- KEYS: session, set. ARGV: idle ms, lifetime ms ("" for none), hash. Reply: {created, now, stamp} | false.
local s = redis.call('HMGET', KEYS[1], 'created', 'stamp', 'created_ms')
if not s[1] then return false end
local t = redis.call('TIME')
local now = tonumber(t[1])
local ttl = tonumber(ARGV[1])
if ARGV[2] ~= '' then
  local started = s[3] and tonumber(s[3]) or tonumber(s[1]) * 1000
  local left = started + tonumber(ARGV[2]) - (now * 1000 + math.floor(tonumber(t[2]) / 1000))
  if left <= 0 then
    redis.call('DEL', KEYS[1])
    redis.call('SREM', KEYS[2], ARGV[3])
    return false
  end
  if left < ttl then ttl = left end
end
redis.call('HSET', KEYS[1], 'last_seen', now)
redis.call('PEXPIRE', KEYS[1], ttl)
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
return {s[1], tostring(now), s[2]}
