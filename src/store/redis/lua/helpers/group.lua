-- run_group(step): a group commit's script (metering/*-group.lua): runs step(keys, input) for each request of the
-- group in turn, KEYS being each request's keys one after another (the same number each) and A the inputs in the same
-- order. Replies one reply per request, in order; a step that errs fails alone ({'failed', message}), and what it
-- wrote before the error stays, as it would alone.
local function run_group(step)
  local per = #KEYS / #A
  local replies = {}
  for i = 1, #A do
    local keys = {}
    for j = 1, per do keys[j] = KEYS[(i - 1) * per + j] end
    local ok, reply = pcall(step, keys, A[i])
    if ok then replies[i] = reply else replies[i] = {'failed', type(reply) == 'table' and reply.err or tostring(reply)} end
  end
  return replies
end
