if ev_was == 'active' and redis.call('HGET', KEYS[1], 'status') == 'disabled' then ev_emit(EV[1], 'account.disabled', EV[2]) end
