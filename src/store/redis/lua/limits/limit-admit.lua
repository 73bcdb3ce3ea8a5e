-- LIMIT_ADMIT: admits a request into one level's windows (the model level), or refuses it with nothing changed.
-- KEYS: lw lt lc. ARGV: request id, tokens, lease ms, window ms, rpm, tpm, max_concurrent (0: none).
-- Reply: {'ok', use...} | {'limited', kind, limit, used, retry ms, too large, use...} (use as lim_use's).
--#include helpers/limit-functions.lua
--#include helpers/clock.lua
local id, tokens, lease_ms, window_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local rpm, tpm, cc = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
lim_purge(KEYS[1], KEYS[2], KEYS[3], now_ms, window_ms)
local refused = lim_check(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, id, tokens, now_ms, window_ms)
if refused then
  local reply = {'limited', unpack(refused)}
  for _, v in ipairs(lim_use(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, now_ms, window_ms)) do reply[#reply + 1] = v end
  return reply
end
lim_commit(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, id, tokens, now_ms, window_ms, lease_ms)
local reply = {'ok'}
for _, v in ipairs(lim_use(KEYS[1], KEYS[2], KEYS[3], rpm, tpm, cc, now_ms, window_ms)) do reply[#reply + 1] = v end
return reply
