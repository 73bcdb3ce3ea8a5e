-- PRODUCT_UPDATE: changes the given fields of an existing product; never creates one.
-- KEYS: product. A: fields (field/value pairs, flat). Reply: the product's fields after the change | {} none.
--#include helpers/args.lua
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if #A.fields > 0 then redis.call('HSET', KEYS[1], unpack(A.fields)) end
return redis.call('HGETALL', KEYS[1])
