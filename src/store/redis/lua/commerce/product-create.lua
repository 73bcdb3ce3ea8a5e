-- PRODUCT_CREATE: adds a product unless its id is taken. Guarantees: ids are unique.
-- KEYS: product, ids. ARGV: id, name, tokens, valid_days, price, currency, active. Reply: created (s) | 0 taken.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = tonumber(redis.call('TIME')[1])
redis.call('HSET', KEYS[1], 'name', ARGV[2], 'tokens', ARGV[3], 'valid_days', ARGV[4], 'price', ARGV[5],
  'currency', ARGV[6], 'active', ARGV[7], 'created', now)
redis.call('RPUSH', KEYS[2], ARGV[1])
return now
