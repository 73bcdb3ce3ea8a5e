-- REVOKE: marks a key revoked (first revocation time wins). Every later RESERVE refuses it at once.
-- KEYS: k. Reply: 1 revoked (now or before), 0 unknown key.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'revoked') == '0' then
  redis.call('HSET', KEYS[1], 'revoked', redis.call('TIME')[1])
end
return 1
