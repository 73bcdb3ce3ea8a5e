-- LIMIT_USE: one level's current use, after dropping what left the window or lapsed (for the admin API).
-- KEYS: lw lt lc. ARGV: window ms, rpm, tpm, max_concurrent. Reply: lim_use's list.
--#include helpers/limit-functions.lua
--#include helpers/clock.lua
local window_ms = tonumber(ARGV[1])
lim_purge(KEYS[1], KEYS[2], KEYS[3], now_ms, window_ms)
return lim_use(KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), now_ms, window_ms)
