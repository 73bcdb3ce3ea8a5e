-- PRODUCT_UPDATE: changes the given fields of an existing product; never creates one.
-- KEYS: product. ARGV: field, value, field, value… Reply: the product's fields after the change | {} none.
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return redis.call('HGETALL', KEYS[1])
