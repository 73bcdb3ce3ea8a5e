-- ACCOUNT_CREATED: account.created, then package.granted for its trial package, each when its event id is given,
-- written once the account exists. KEYS: a, ev. ARGV: event id ("" for none), data, trial's event id ("" for none), data.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local now = redis.call('TIME')[1]
if ARGV[1] ~= '' then redis.call('XADD', KEYS[2], '*', 'id', ARGV[1], 'type', 'account.created', 'created', now, 'data', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('XADD', KEYS[2], '*', 'id', ARGV[3], 'type', 'package.granted', 'created', now, 'data', ARGV[4]) end
return 1
