-- SETTLE for a group of one account's settlements in one script (group commit: the settlements a process has ready
-- in one turn of its event loop, one script call instead of one each). Each runs as SETTLE would alone, in order, so
-- a request id twice in a group settles once and the second is a duplicate.
-- KEYS: SETTLE's eight keys (settle.lua) for each settlement in turn, all of one account. A: the settlements' inputs
-- (settle.lua's A), in the same order. Reply: one SETTLE reply per settlement, in order.
--#include helpers/args.lua
--#include helpers/now-and-purge.lua
--#include helpers/account-levels.lua
--#include helpers/budgets.lua
--#include helpers/settled-marks.lua
--#include metering/settle-step.lua
local per = #KEYS / #A
local replies = {}
for i = 1, #A do
  local keys = {}
  for j = 1, per do keys[j] = KEYS[(i - 1) * per + j] end
  replies[i] = settle_step(keys, A[i])
end
return replies
