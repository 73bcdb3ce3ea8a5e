/**
 * The commerce store's Lua scripts, one per check-and-change. Products share the hash tag `{products}`; a code's
 * record is one key under its own tag. Time comes from the server's TIME, so every process agrees on expiry.
 *
 * Layout (prefix omitted):
 *   {products}:p:ID  HASH  name tokens valid_days price currency active created (valid_days 0 = none)
 *   {products}:ids   LIST  product ids, in creation order
 *   {ID}:rc          HASH  product_id tokens valid_days expires_at created redeemed_by redeemed_at credited
 *                          (expires_at 0 = never; redeemed_by "" = not yet)
 *   rch:HASH         STRING the code id for a code's hash (written last, so a half-made code is never found)
 *   rcs              SET   code ids
 *   co:SESSION       HASH  account_id product_id tokens valid_days amount currency created (valid_days 0 = none):
 *                          a Checkout Session this proxy created; expires after CHECKOUT_RECORD_DAYS
 */

/**
 * PRODUCT_CREATE: adds a product unless its id is taken. Guarantees: ids are unique.
 * KEYS: product, ids. ARGV: id, name, tokens, valid_days, price, currency, active. Reply: created (s) | 0 taken.
 */
export const PRODUCT_CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = tonumber(redis.call('TIME')[1])
redis.call('HSET', KEYS[1], 'name', ARGV[2], 'tokens', ARGV[3], 'valid_days', ARGV[4], 'price', ARGV[5],
  'currency', ARGV[6], 'active', ARGV[7], 'created', now)
redis.call('RPUSH', KEYS[2], ARGV[1])
return now
`;

/**
 * PRODUCT_UPDATE: changes the given fields of an existing product; never creates one.
 * KEYS: product. ARGV: field, value, field, value… Reply: the product's fields after the change | {} none.
 */
export const PRODUCT_UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * CODE_CLAIM: gives a code to the first account that claims it. Guarantees: one account per code, ever; that
 * account claiming again before the credit is confirmed gets it back ('resumed'), so a crash between the two steps
 * loses no credit; an expired code is never claimed.
 * KEYS: code. ARGV: account id. Reply: {'claimed'|'resumed', fields…} | {'used'} | {'expired'} | {'unknown'}.
 */
export const CODE_CLAIM = `
local c = redis.call('HMGET', KEYS[1], 'redeemed_by', 'expires_at', 'credited')
if not c[1] then return {'unknown'} end
if c[1] ~= '' then
  if c[1] == ARGV[1] and c[3] == '0' then return {'resumed', unpack(redis.call('HGETALL', KEYS[1]))} end
  return {'used'}
end
local now = tonumber(redis.call('TIME')[1])
local expires = tonumber(c[2])
if expires > 0 and expires <= now then return {'expired'} end
redis.call('HSET', KEYS[1], 'redeemed_by', ARGV[1], 'redeemed_at', now)
return {'claimed', unpack(redis.call('HGETALL', KEYS[1]))}
`;

/**
 * CODE_CREDITED: marks a claimed code's package as credited (never an unclaimed code's).
 * KEYS: code. Reply: 1 marked, 0 not claimed.
 */
export const CODE_CREDITED = `
local by = redis.call('HGET', KEYS[1], 'redeemed_by')
if not by or by == '' then return 0 end
redis.call('HSET', KEYS[1], 'credited', 1)
return 1
`;
