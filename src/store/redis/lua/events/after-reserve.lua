-- After RESERVE: budget.exceeded when a budget refused the request (run only when an endpoint wants it). EV.budget:
-- see ev_budget.
if reply[1] == 'budget' then
  local h = reply[2] == 'key' and KEYS[2] or KEYS[1]
  ev_budget(h, reply[2], EV.budget, A.starts, true)
end
