-- After CREATE_KEY: key.created when made. EV: event id, data.
if reply == 1 then ev_emit(EV[1], 'key.created', EV[2]) end
