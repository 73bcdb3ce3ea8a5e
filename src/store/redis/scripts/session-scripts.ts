/**
 * The session store's Lua scripts, one per check-and-change. A session's keys share its account's hash tag, so each
 * script runs on one slot, on Redis and Redis Cluster alike; a throttle bucket is one key. Time is the server's.
 *
 * Layout, for account A and session-id hash H (prefix omitted):
 *   {A}:ss:H  HASH    created last_seen (seconds) stamp; PEXPIREs idle ms after its last use
 *   {A}:ss    SET     the account's session hashes; expires with the longest-lived of them
 *   lf:B      STRING  attempts counted in bucket B's current window; PEXPIREs at the window's end
 */

/**
 * SESSION_CREATE: stores a session and adds it to its account's set.
 * KEYS: session, set. ARGV: hash, idle ms, stamp. Reply: 1.
 */
export const SESSION_CREATE = `
local now = tonumber(redis.call('TIME')[1])
redis.call('HSET', KEYS[1], 'created', now, 'last_seen', now, 'stamp', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
-- Every member expires no later than idle ms from now, so the set may too (it is refreshed on each use).
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`;

/**
 * SESSION_TOUCH: reads a live session and pushes its idle expiry forward; a session past its idle time is gone.
 * KEYS: session, set. ARGV: idle ms. Reply: {created, now, stamp} | false.
 */
export const SESSION_TOUCH = `
local s = redis.call('HMGET', KEYS[1], 'created', 'stamp')
if not s[1] then return false end
local now = tonumber(redis.call('TIME')[1])
redis.call('HSET', KEYS[1], 'last_seen', now)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
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
