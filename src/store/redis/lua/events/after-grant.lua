-- After GRANT: package.granted when credited (EV[1] '1', EV[2] event id, EV[3] data), and balance.low's re-arming
-- (EV[4] '1', EV[5] event id, EV[6] default threshold).
if reply[1] == 'ok' then
  if EV[1] == '1' then ev_emit(EV[2], 'package.granted', EV[3]) end
  if EV[4] == '1' then ev_low_balance(EV[5], EV[6]) end
end
