-- PACKAGE_EXPIRY: package.expiring for each package with tokens left that expires within ARGV warn seconds of ARGV
-- now, and package.expired for each that has expired, each written once per package however many processes sweep:
-- {A}:pe (package id -> 'expiring' | 'expired', the last written) is checked and set in this same step.
-- KEYS: p pe ev. ARGV: now (s), warn (s), '1' expiring wanted, '1' expired wanted, base event id, account id.
-- Reply: the number of events written.
local now, warn = tonumber(ARGV[1]), tonumber(ARGV[2])
local want = { ['package.expiring'] = ARGV[3] == '1', ['package.expired'] = ARGV[4] == '1' }
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
      redis.call('XADD', KEYS[3], '*', 'id', ARGV[5] .. written, 'type', 'package.' .. kind, 'created', now, 'data',
        string.format('{"account_id":"%s","package_id":"%s","tokens":%d,"remaining":%d,"expires_at":%d}', ARGV[6], flat[i], tokens, rem, exp))
    end
  end
end
return written
