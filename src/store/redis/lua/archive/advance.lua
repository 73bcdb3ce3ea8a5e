-- ADVANCE: only while the caller holds the lease, moves the shipped cursor forward to ARGV cursor (never back) and
-- counts n more shipped; then, when keep ms is given, trims the ledger with XTRIM MINID to what is after the cursor
-- or not older than keep ms, whichever keeps more. Guarantees: the cursor never passes what the caller shipped (it
-- calls this after PostgreSQL committed), a shipper that lost its lease changes nothing, and no record after the
-- cursor (not yet in PostgreSQL) is ever trimmed, nor any after the rollup cursor (`rc` of {A}:a: not yet in the
-- daily rollups).
-- KEYS: sl sc u a. ARGV: owner, cursor, n, keep ms ('' for no trimming). Reply: 1 done, 0 lease lost.
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
  local rms, rseq = parts(redis.call('HGET', KEYS[4], 'rc') or '')
  if rms then
    local mms, mseq = parts(minid)
    if rms < mms or (rms == mms and rseq + 1 < mseq) then minid = string.format('%d-%d', rms, rseq + 1) end
  end
  redis.call('XTRIM', KEYS[3], 'MINID', minid)
end
return 1
