-- LIMIT_ADMIT: admits a request into one level's windows (the model level), or refuses it with nothing changed.
-- KEYS: lw lt lc. A: id (the request's), tokens, lease_ms, window_ms, rpm, tpm, cc (max_concurrent; 0: none).
-- Reply: {'ok', use...} | {'limited', kind, limit, used, retry ms, too large, use...} (use as lim_use's).
--#include helpers/args.lua
--#include helpers/limit-functions.lua
--#include helpers/clock.lua
local id, tokens, lease_ms, window_ms = A.id, A.tokens, A.lease_ms, A.window_ms
local rpm, tpm, cc = A.rpm, A.tpm, A.cc
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
