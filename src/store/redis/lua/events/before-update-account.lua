-- Before UPDATE_ACCOUNT: the status; after it, account.disabled when it went from active to disabled. EV: id, data.
local ev_was = redis.call('HGET', KEYS[1], 'status')