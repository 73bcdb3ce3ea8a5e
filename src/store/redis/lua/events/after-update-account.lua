-- After UPDATE_ACCOUNT: account.disabled when the status went from active to disabled. EV.disabled: {id, data}.
if ev_was == 'active' and redis.call('HGET', KEYS[1], 'status') == 'disabled' then
  ev_emit(EV.disabled.id, 'account.disabled', EV.disabled.data)
end
