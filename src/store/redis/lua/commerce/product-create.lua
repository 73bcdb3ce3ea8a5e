-- PRODUCT_CREATE: adds a product unless its id is taken. Guarantees: ids are unique.
-- KEYS: product, ids. A: id, name, tokens, valid_days, price, currency, active. Reply: created (s) | 0 taken.
--#include helpers/args.lua
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = tonumber(redis.call('TIME')[1])
redis.call('HSET', KEYS[1], 'name', A.name, 'tokens', A.tokens, 'valid_days', A.valid_days, 'price', A.price,
  'currency', A.currency, 'active', A.active, 'created', now)
redis.call('RPUSH', KEYS[2], A.id)
return now
