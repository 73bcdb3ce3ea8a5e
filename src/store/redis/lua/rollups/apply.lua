-- APPLY: the rollup follower's step (redis-rollup-follower.ts). Adds a batch of the account's ledger records, summed
-- in TypeScript per UTC day and model or key, to the daily rollups ({A}:d:<day>), and moves the account's rollup
-- cursor (`rc` of {A}:a, the last record applied) to the batch's last record, in one step: only when the cursor is
-- still the one the batch was read after, so a batch is applied once however many followers read it, and a follower
-- killed before this step leaves the records to the next one.
-- KEYS: a. A: after (the cursor the batch was read after), last (its last record's id), days ({day, rows: {field,
-- {requests, prompt, completion, cached, reasoning, charged}}}), keep_days (how long a day's rollup is kept).
-- A value with more sums than a row (a later version's) keeps them. Reply: 1 applied, 0 the cursor had moved.
--#include helpers/args.lua
local slot = string.sub(KEYS[1], 1, -2)
if redis.call('HGET', KEYS[1], 'rc') ~= A.after then return 0 end
local function roll_add(h, field, adds)
  local sums, n = {}, 0
  local was = redis.call('HGET', h, field)
  if was then for v in string.gmatch(was, '%d+') do n = n + 1; sums[n] = tonumber(v) end end
  for i = 1, #adds do sums[i] = (sums[i] or 0) + tonumber(adds[i]) end
  for i = 1, #sums do sums[i] = string.format('%d', sums[i]) end
  redis.call('HSET', h, field, table.concat(sums, ':'))
end
for _, d in ipairs(A.days) do
  local h = slot .. 'd:' .. string.format('%d', d.day)
  for _, row in ipairs(d.rows) do roll_add(h, row[1], row[2]) end
  redis.call('EXPIREAT', h, (d.day + 1 + A.keep_days) * 86400)
end
redis.call('HSET', KEYS[1], 'rc', A.last)
return 1
