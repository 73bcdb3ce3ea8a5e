-- After SETTLE: usage.settled when settled (EV.usage: {id, data}), the balance.low test (EV.low), and the budgets'
-- (EV.budget), each only when wanted (see ev_low_balance and ev_budget).
if reply[1] == 'ok' then
  if EV.usage then ev_emit(EV.usage.id, 'usage.settled', EV.usage.data) end
  if EV.low then ev_low_balance(EV.low) end
  if EV.budget then
    if A.key_id ~= '' then ev_budget(KEYS[2], 'key', EV.budget, A.starts, false) end
    ev_budget(KEYS[1], 'account', EV.budget, A.starts, false)
  end
end
