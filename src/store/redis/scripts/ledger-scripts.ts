/**
 * What SETTLE keeps beside the ledger, as Lua functions it includes: the settled markers, compacted to one hash per
 * account and hour, and the daily rollups the daily totals read instead of the ledger. Both live in the account's slot.
 *
 * Layout (prefix omitted), for account A:
 *   {A}:sh:<hour>  HASH  the requests settled in that hour (unix s / 3600): marker -> "" (a lower-case UUID request
 *                        id as its 16 bytes and a byte 0xFF, which no UTF-8 text holds, so it never equals another
 *                        id; any other id as itself);
 *                        expires the dedup window after its hour ends, so every marker lives at least that long.
 *   {A}:d:<day>    HASH  the account's rollup of a UTC day (unix s / 86400): `m:<model>` and `k:<key id>` ->
 *                        "requests:prompt:completion:cached:reasoning:charged" (the key's only for requests with a
 *                        key); kept ROLLUP_DAYS after the day.
 *   {A}:a gains `ru`: the first day the rollups hold whole: 0 when they began with the account's first record, else
 *                        the day after the upgrade that brought them (the ledger already held records).
 */

/** How long a day's rollup is kept: a year's charts and a month's slack. */
export const ROLLUP_DAYS = 400;

/**
 * settled_mark(id): the request's field in the hour buckets. settled_before(mark, ttl): whether a bucket that can
 * still hold a marker set within ttl holds it. settle_mark(mark, ttl): marks it in this hour's bucket.
 */
export const SETTLED_MARKS = `
local settle_slot = string.sub(KEYS[1], 1, -2)
local function settled_mark(id)
  if #id == 36 and string.sub(id, 9, 9) == '-' and string.sub(id, 14, 14) == '-' and string.sub(id, 19, 19) == '-'
    and string.sub(id, 24, 24) == '-' and not string.find(id, '[^%-0-9a-f]') then
    local hex = string.gsub(id, '%-', '')
    if #hex == 32 then return (string.gsub(hex, '%x%x', function(h) return string.char(tonumber(h, 16)) end)) .. '\\255' end
  end
  return id
end
local function settled_before(mark, ttl)
  local hour = math.floor(now_s / 3600)
  for h = hour, math.floor((now_s - ttl) / 3600), -1 do
    if redis.call('HEXISTS', settle_slot .. 'sh:' .. h, mark) == 1 then return true end
  end
  return false
end
local function settle_mark(mark, ttl)
  local hour = math.floor(now_s / 3600)
  local bucket = settle_slot .. 'sh:' .. hour
  redis.call('HSET', bucket, mark, '')
  redis.call('EXPIREAT', bucket, (hour + 1) * 3600 + ttl)
end
`;

/**
 * roll_up(since, model, key id, adds): adds {requests, prompt, completion, cached, reasoning, charged} to today's
 * rollup, per model and per key; since is the account's \`ru\` (false: the first rollup, which sets it). A value
 * with more sums than adds (a later version's) keeps them.
 */
export const ROLLUP = `
local function roll_add(h, field, adds)
  local sums, n = {}, 0
  local was = redis.call('HGET', h, field)
  if was then for v in string.gmatch(was, '%d+') do n = n + 1; sums[n] = tonumber(v) end end
  for i = 1, #adds do sums[i] = (sums[i] or 0) + tonumber(adds[i]) end
  for i = 1, #sums do sums[i] = string.format('%d', sums[i]) end
  redis.call('HSET', h, field, table.concat(sums, ':'))
end
local function roll_up(since, model, key_id, adds)
  local day = math.floor(now_s / 86400)
  local h = settle_slot .. 'd:' .. day
  roll_add(h, 'm:' .. model, adds)
  if key_id ~= '' then roll_add(h, 'k:' .. key_id, adds) end
  redis.call('EXPIREAT', h, (day + 1 + ${ROLLUP_DAYS}) * 86400)
  if not since then
    -- The account's first record: every day is whole (0). Else its ledger has records from before rollups, which
    -- leave today partial: the rollups hold whole days from tomorrow.
    redis.call('HSET', KEYS[1], 'ru', redis.call('XLEN', settle_slot .. 'u') > 1 and day + 1 or 0)
  end
end
`;
