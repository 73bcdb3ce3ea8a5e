-- RELEASE: returns a reservation to the account (and its key), charging nothing; on the key and account levels the
-- slot is freed and tpm corrected to 0 (the request still counts as a request); budgets get back what it held.
-- Idempotent.
-- KEYS: a r ra. ARGV: request id, limit window ms. Reply: 1 released, 0 nothing held.
--#include helpers/now-and-purge.lua
--#include helpers/account-levels.lua
local held = redis.call('HGET', KEYS[3], ARGV[1])
if not held then return 0 end
levels_end(levels_of(string.match(held, '^%d+:([^:]*)')), ARGV[1], 'release', 0, tonumber(ARGV[2]))
drop_held(KEYS[1], KEYS[2], KEYS[3], ARGV[1], held)
return 1
