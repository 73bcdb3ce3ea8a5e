-- Before REVOKE: whether the key was live; after it, key.revoked only for its first revocation. EV: event id, data.
local ev_was = redis.call('HGET', KEYS[1], 'revoked')