-- After RESERVE: budget.exceeded when a budget refused the request (run only when an endpoint wants it). EV: base
-- event id, the ends of this month and the next.
if reply[1] == 'budget' then
  local starts = { day = tonumber(ARGV[10]), week = tonumber(ARGV[11]), month = tonumber(ARGV[12]) }
  local h = reply[2] == 'key' and KEYS[2] or KEYS[1]
  ev_budget(h, reply[2], ARGV[7], { exceeded = true }, starts, { tonumber(EV[2]), tonumber(EV[3]) }, EV[1], true)
end
