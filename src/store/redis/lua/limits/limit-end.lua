-- LIMIT_END: a request lets go of one level (see lim_end). Idempotent for release and undo; a settle retried after
-- it landed sets the same count again. KEYS: lw lt lc. ARGV: request id, how, tokens, window ms. Reply: 1.
--#include helpers/limit-functions.lua
--#include helpers/clock.lua
lim_purge(KEYS[1], KEYS[2], KEYS[3], now_ms, tonumber(ARGV[4]))
lim_end(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], tonumber(ARGV[3]))
return 1
