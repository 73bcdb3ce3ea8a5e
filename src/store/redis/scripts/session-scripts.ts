/**
 * The session store's Lua scripts, one per check-and-change. A session's keys share its account's hash tag, so each
 * script runs on one slot, on Redis and Redis Cluster alike; a throttle bucket is one key. Time is the server's.
 *
 * Layout, for account A and session-id hash H (prefix omitted):
 *   {A}:ss:H  HASH    created last_seen (seconds) created_ms stamp; PEXPIREs idle ms after its last use, and never
 *                     later than its absolute lifetime after created_ms (a session from before has created alone)
 *   {A}:ss    SET     the account's session hashes; expires with the longest-lived of them
 *   lf:B      STRING  attempts counted in bucket B's current window; PEXPIREs at the window's end
 */

/**
 * SESSION_CREATE: stores a session and adds it to its account's set.
 * KEYS: session, set. ARGV: hash, idle ms, stamp, lifetime ms ("" for none). Reply: 1.
 */
export const SESSION_CREATE = `
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
`;

/**
 * SESSION_TOUCH: reads a live session and pushes its idle expiry forward, never past its absolute lifetime; a session
 * past its idle time is gone, one past its lifetime is ended here, however recently it was used.
 * KEYS: session, set. ARGV: idle ms, lifetime ms ("" for none), hash. Reply: {created, now, stamp} | false.
 */
export const SESSION_TOUCH = `
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
`;

/**
 * SESSION_DELETE: ends one session. KEYS: session, set. ARGV: hash. Reply: 1 deleted, 0 there was none.
 */
export const SESSION_DELETE = `
redis.call('SREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
`;

/**
 * SESSION_DELETE_ALL: ends every session of an account in one step, so none survives a disable or password change.
 * KEYS: set. ARGV: the session key prefix ("<prefix>{A}:ss:"). Reply: sessions deleted.
 */
export const SESSION_DELETE_ALL = `
local hashes = redis.call('SMEMBERS', KEYS[1])
local n = 0
for i = 1, #hashes do n = n + redis.call('DEL', ARGV[1] .. hashes[i]) end
redis.call('DEL', KEYS[1])
return n
`;

/**
 * SESSION_KEEP_ONLY: ends every session of an account but one, and gives that one (if it still exists) a new stamp, in
 * one step: after a password change no other session survives, and the one it was made in goes on.
 * KEYS: set, the kept session. ARGV: kept hash, the session key prefix ("<prefix>{A}:ss:"), stamp. Reply: sessions ended.
 */
export const SESSION_KEEP_ONLY = `
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
`;

/**
 * ATTEMPT_TAKE: counts an attempt in a fixed window unless the window already holds the most allowed, so no more
 * than max attempts pass per window however many arrive at once.
 * KEYS: bucket. ARGV: window ms, max. Reply: {1} counted | {0, ms until the window ends}.
 */
export const ATTEMPT_TAKE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[2]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = tonumber(ARGV[1]) end
  return {0, ttl}
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {1}
`;

/**
 * ATTEMPT_REFUND: gives back one attempt of the current window (never below zero, never reviving an ended window).
 * KEYS: bucket. Reply: 1.
 */
export const ATTEMPT_REFUND = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 1
`;
