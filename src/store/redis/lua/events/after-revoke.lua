-- After REVOKE: key.revoked only for the key's first revocation (ev_was: events/before-revoke.lua). EV.key: {id, data}.
if reply == 1 and ev_was == '0' then ev_emit(EV.key.id, 'key.revoked', EV.key.data) end
