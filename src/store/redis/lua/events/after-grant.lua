-- After GRANT: package.granted when credited (EV.granted: {id, data}, when wanted), and balance.low's re-arming
-- (EV.low, when wanted: see ev_low_balance; a grant never writes it).
if reply[1] == 'ok' then
  if EV.granted then ev_emit(EV.granted.id, 'package.granted', EV.granted.data) end
  if EV.low then ev_low_balance(EV.low, true) end
end
