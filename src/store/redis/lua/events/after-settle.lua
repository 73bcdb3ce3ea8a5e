-- After SETTLE: usage.settled when settled (EV[1] '1', EV[2] request id, EV[3] data), the balance.low test (EV[4]
-- '1', EV[5] event id, EV[6] default threshold), and the budgets' (EV[7] '1': budget.threshold wanted, EV[8] '1':
-- budget.exceeded wanted, EV[9] base event id, EV[10] and EV[11] the ends of this month and the next).
if reply[1] == 'ok' then
  if EV[1] == '1' then ev_emit(EV[2], 'usage.settled', EV[3]) end
  if EV[4] == '1' then ev_low_balance(EV[5], EV[6]) end
  if EV[7] == '1' or EV[8] == '1' then
    local want = { threshold = EV[7] == '1', exceeded = EV[8] == '1' }
    local starts = { day = tonumber(ARGV[12]), week = tonumber(ARGV[13]), month = tonumber(ARGV[14]) }
    local month_ends = { tonumber(EV[10]), tonumber(EV[11]) }
    if ARGV[10] ~= '' then ev_budget(KEYS[2], 'key', ARGV[10], want, starts, month_ends, EV[9], false) end
    ev_budget(KEYS[1], 'account', ARGV[10], want, starts, month_ends, EV[9], false)
  end
end
