-- After CREATE_KEY: key.created when made. EV.key: {id, data}.
if reply == 1 then ev_emit(EV.key.id, 'key.created', EV.key.data) end
