-- The key and account levels, inside the account's slot (for RESERVE, SETTLE, RELEASE, RENEW and the state scripts,
-- after NOW_AND_PURGE). A level exists only when its hash's `rl` field is set ("rpm:tpm:max_concurrent"), so a
-- request on a key and account without limits costs one string comparison each. The level keys are named from the
-- account hash KEYS[1] ({A}:a): {A}:lw, {A}:lt, {A}:lc for the account, {A}:lw:K, {A}:lt:K, {A}:lc:K for key K.
--#include helpers/limit-functions.lua
local level_base = string.sub(KEYS[1], 1, -2)
local function make_level(name, rl, suffix)
  local rpm, tpm, cc = string.match(rl, '^(%d+):(%d+):(%d+)$')
  return { name = name, w = level_base .. 'lw' .. suffix, t = level_base .. 'lt' .. suffix, c = level_base .. 'lc' .. suffix,
    rpm = tonumber(rpm), tpm = tonumber(tpm), cc = tonumber(cc) }
end
-- The levels that have limits (key first), or nil when neither has any.
local function account_levels(key_rl, account_rl, key_id)
  local levels = nil
  if key_rl and key_rl ~= '' and key_id ~= '' then levels = { make_level('key', key_rl, ':' .. key_id) } end
  if account_rl and account_rl ~= '' then
    levels = levels or {}
    levels[#levels + 1] = make_level('account', account_rl, '')
  end
  return levels
end
-- The levels of a request on key_id (or none), reading both flags.
local function levels_of(key_id)
  local key_rl = nil
  if key_id ~= '' then key_rl = redis.call('HGET', level_base .. 'k:' .. key_id, 'rl') end
  return account_levels(key_rl, redis.call('HGET', KEYS[1], 'rl'), key_id)
end
local function levels_end(levels, id, how, tokens, window_ms)
  if not levels then return end
  for _, l in ipairs(levels) do
    lim_purge(l.w, l.t, l.c, now_ms, window_ms)
    lim_end(l.w, l.t, l.c, id, how, tokens)
  end
end
