-- roll_up(since, model, key id, adds, keep days): adds {requests, prompt, completion, cached, reasoning, charged} to today's
-- rollup, per model and per key; since is the account's `ru` (false: the first rollup, which sets it). A value
-- with more sums than adds (a later version's) keeps them.
local function roll_add(h, field, adds)
  local sums, n = {}, 0
  local was = redis.call('HGET', h, field)
  if was then for v in string.gmatch(was, '%d+') do n = n + 1; sums[n] = tonumber(v) end end
  for i = 1, #adds do sums[i] = (sums[i] or 0) + tonumber(adds[i]) end
  for i = 1, #sums do sums[i] = string.format('%d', sums[i]) end
  redis.call('HSET', h, field, table.concat(sums, ':'))
end
local function roll_up(since, model, key_id, adds, keep_days)
  local day = math.floor(now_s / 86400)
  local h = settle_slot .. 'd:' .. day
  roll_add(h, 'm:' .. model, adds)
  if key_id ~= '' then roll_add(h, 'k:' .. key_id, adds) end
  redis.call('EXPIREAT', h, (day + 1 + keep_days) * 86400)
  if not since then
    -- The account's first record: every day is whole (0). Else its ledger has records from before rollups, which
    -- leave today partial: the rollups hold whole days from tomorrow.
    redis.call('HSET', KEYS[1], 'ru', redis.call('XLEN', settle_slot .. 'u') > 1 and day + 1 or 0)
  end
end
