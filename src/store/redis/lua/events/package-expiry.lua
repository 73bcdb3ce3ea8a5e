-- PACKAGE_EXPIRY: package.expiring for each package with tokens left that expires within warn seconds of now, and package.expired for each that has expired, each written once per package however many processes sweep:
-- {A}:pe (package id -> 'expiring' | 'expired', the last written) is checked and set in this same step.
-- KEYS: p pe ev. A: now (s), warn (s), expiring and expired (whether wanted), id (a base event id), data (the
-- payload's template, helpers/fill.lua: slots package_id, tokens, remaining, expires_at).
-- Reply: the number of events written.
--#include helpers/args.lua
--#include helpers/fill.lua
local now, warn = A.now, A.warn
local want = { ['package.expiring'] = A.expiring, ['package.expired'] = A.expired }
local flat = redis.call('HGETALL', KEYS[1])
local written = 0
for i = 1, #flat, 2 do
  local rem, exp, tokens = string.match(flat[i + 1], '^(%d+):(%d+):(%d+)')
  rem, exp = tonumber(rem), tonumber(exp)
  if exp > 0 and exp - warn <= now then
    local done = redis.call('HGET', KEYS[2], flat[i])
    local kind = exp <= now and 'expired' or 'expiring'
    local skip = done == 'expired' or (kind == 'expiring' and (done or rem == 0))
    if not skip and want['package.' .. kind] then
      redis.call('HSET', KEYS[2], flat[i], kind)
      written = written + 1
      redis.call('XADD', KEYS[3], '*', 'id', A.id .. written, 'type', 'package.' .. kind, 'created', now, 'data',
        fill(A.data, { package_id = flat[i], tokens = tonumber(tokens), remaining = rem, expires_at = exp }))
    end
  end
end
return written
