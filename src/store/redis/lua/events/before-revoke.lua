-- Before REVOKE: whether the key was live (events/after-revoke.lua writes key.revoked only for its first revocation).
local ev_was = redis.call('HGET', KEYS[1], 'revoked')
