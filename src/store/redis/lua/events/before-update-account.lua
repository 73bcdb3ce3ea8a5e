-- Before UPDATE_ACCOUNT: the account's status (events/after-update-account.lua compares it with the new one).
local ev_was = redis.call('HGET', KEYS[1], 'status')
