if reply == 1 and ev_was == '0' then ev_emit(EV[1], 'key.revoked', EV[2]) end
