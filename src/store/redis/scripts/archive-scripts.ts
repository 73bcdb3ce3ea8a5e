/**
 * The ledger archive's Redis side: which records of an account's ledger PostgreSQL holds, and who ships them (and
 * below, the same for stored responses' owners).
 *
 * Layout (prefix omitted), for account A:
 *   {A}:sc  HASH   c: the shipped cursor (the last ledger record PostgreSQL has committed; absent: none),
 *                  n: how many records were shipped (the backlog is the stream's entries-added less n)
 *   {A}:sl  STRING the shipping lease: the owner's token, expiring (one shipper per account at a time)
 */

/** LEASE: takes the lease when free, or renews it for its owner. KEYS: sl. ARGV: owner, ms. Reply: 1 held, 0 another's. */
export const LEASE = `
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if held ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** RELEASE: gives the lease up, only for its owner (a stopping shipper: another takes over at once). KEYS: sl. ARGV: owner. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

/**
 * ADVANCE: only while the caller holds the lease, moves the shipped cursor forward to ARGV cursor (never back) and
 * counts n more shipped; then, when keep ms is given, trims the ledger with XTRIM MINID to what is after the cursor
 * or not older than keep ms, whichever keeps more. Guarantees: the cursor never passes what the caller shipped (it
 * calls this after PostgreSQL committed), a shipper that lost its lease changes nothing, and no record after the
 * cursor (not yet in PostgreSQL) is ever trimmed.
 * KEYS: sl sc u. ARGV: owner, cursor, n, keep ms ('' for no trimming). Reply: 1 done, 0 lease lost.
 */
export const ADVANCE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local function parts(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local cms, cseq = parts(redis.call('HGET', KEYS[2], 'c') or '0-0')
local nms, nseq = parts(ARGV[2])
if nms > cms or (nms == cms and nseq > cseq) then
  redis.call('HSET', KEYS[2], 'c', ARGV[2])
  redis.call('HINCRBY', KEYS[2], 'n', ARGV[3])
  cms, cseq = nms, nseq
end
if ARGV[4] ~= '' and (cms > 0 or cseq > 0) then
  local keep = tonumber(ARGV[4])
  local minid = string.format('%d-%d', cms, cseq + 1)
  if keep <= cms then minid = string.format('%d-0', keep) end
  redis.call('XTRIM', KEYS[3], 'MINID', minid)
end
return 1
`;

/*
 * Stored responses' owners (redis-response-owners.ts), with the archive: `{own}:sl` the owners shipper's lease (LEASE
 * and RELEASE above), `{own}:sc` the newest day shipped with every day before it.
 */

/**
 * SHORTEN: a shipped day's shard hash expires at ARGV expire ms, only if it holds exactly ARGV n ids (those
 * PostgreSQL committed): an id written since is never dropped unshipped. KEYS: the hash. Reply: 1 done, 0 changed.
 */
export const SHORTEN = `
if redis.call('HLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
`;

/**
 * ADVANCE_DAY: only while the caller holds the lease, moves the shipped day forward to ARGV day (never back).
 * KEYS: sl sc. ARGV: owner, day. Reply: 1 done, 0 lease lost.
 */
export const ADVANCE_DAY = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local day = tonumber(ARGV[2])
local shipped = tonumber(redis.call('GET', KEYS[2]) or '')
if shipped == nil or day > shipped then redis.call('SET', KEYS[2], ARGV[2]) end
return 1
`;
