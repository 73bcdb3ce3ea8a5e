/**
 * Events written in the same atomic step as their cause. `withEvents` wraps a script of the store unchanged: the
 * wrapped script takes the account's outbox stream {A}:ev as one KEY more (the last) and the event arguments as
 * ARGV more (the last is their count); it runs the original with its own KEYS and ARGV, then writes the events its
 * outcome calls for, and replies {1 if the account's outbox was empty before this step's events else 0, the original's
 * reply}: the store marks the account only then (a non-empty outbox is marked already, and the hand-on unmarks it
 * only once it has seen it empty; redis-outbox.ts). The store runs the wrapped script only while a delivery worker runs (rare events are always written
 * then; usage.settled only while an endpoint wants it), so beside a host's serving store every step is the very
 * script it was.
 *
 * Layout (prefix omitted): {A}:ev STREAM the account's outbox: id type created data (JSON); {A}:a gains `low_at` (the
 * account's balance.low threshold, "" or absent: the default) and `low` ("1" while below it, once notified); {A}:a and
 * {A}:k:K gain `bt` and `bx`, the period start budget.threshold and budget.exceeded were last written for; {A}:pe HASH package id -> the last of
 * its expiry events written ('expiring' | 'expired').
 */

/** Takes the event arguments and the outbox key off ARGV and KEYS; helpers to write an event and test balance.low. */
const EVENT_PROLOGUE = `
local ev_n = tonumber(table.remove(ARGV))
local EV = {}
for i = #ARGV - ev_n + 1, #ARGV do EV[#EV + 1] = ARGV[i] end
for _ = 1, ev_n do table.remove(ARGV) end
local ev_stream = table.remove(KEYS)
local ev_slot = string.sub(ev_stream, 1, -3)
local ev_account = string.match(ev_stream, '{(.-)}')
local ev_written = 0
local function ev_emit(id, type, data)
  ev_written = ev_written + 1
  redis.call('XADD', ev_stream, '*', 'id', id, 'type', type, 'created', redis.call('TIME')[1], 'data', data)
end
-- balance.low: live packages less debt, against the account's threshold; written once per crossing below it, and
-- armed again only once the balance is back at or above it. EV: event id, default threshold.
local function ev_low_balance(id, default_threshold)
  local a = ev_slot .. 'a'
  local st = redis.call('HMGET', a, 'low_at', 'low', 'debt')
  if st[3] == false then return end
  local threshold = tonumber((st[1] and st[1] ~= '') and st[1] or default_threshold)
  local now = tonumber(redis.call('TIME')[1])
  local balance = -tonumber(st[3])
  for _, v in ipairs(redis.call('HVALS', ev_slot .. 'p')) do
    local rem, exp = string.match(v, '^(%d+):(%d+)')
    exp = tonumber(exp)
    if exp == 0 or exp > now then balance = balance + tonumber(rem) end
  end
  if balance < threshold then
    if st[2] ~= '1' then
      redis.call('HSET', a, 'low', '1')
      ev_emit(id, 'balance.low', string.format('{"account_id":"%s","balance":%d,"threshold":%d}', ev_account, balance, threshold))
    end
  elseif st[2] == '1' then
    redis.call('HDEL', a, 'low')
  end
end
-- budget.threshold (the period's charged tokens bs reached 80 % of the budget) and budget.exceeded (all of it, or the
-- budget refused a request: refused), each once per period per level: the level's hash h keeps the period start each
-- was last written for (bt, bx), so the next period arms both again. want: {threshold=, exceeded=}; starts: the
-- periods' starts {day=, week=, month=}; month_ends: the ends of this month and the next; id: a base event id.
local function ev_budget(h, level, key_id, want, starts, month_ends, id, refused)
  local c = redis.call('HMGET', h, 'bg', 'bp', 'bs', 'bt', 'bx')
  if not c[1] or c[1] == '' then return end
  local tokens, period = string.match(c[1], '^(%d+):(%a+)$')
  tokens = tonumber(tokens)
  local start, spent = tonumber(c[2] or '0'), tonumber(c[3] or '0')
  if start < starts[period] then
    if not refused then return end
    start, spent = starts[period], 0
  end
  local resets = start + 86400
  if period == 'week' then resets = start + 7 * 86400
  elseif period == 'month' then resets = (start == starts.month) and month_ends[1] or month_ends[2] end
  local data = string.format('{"account_id":"%s","key_id":%s,"level":"%s","tokens":%d,"period":"%s","spent":%d,"period_start":%d,"resets_at":%d}',
    ev_account, level == 'key' and ('"' .. key_id .. '"') or 'null', level, tokens, period, spent, start, resets)
  if want.threshold and not refused and spent * 5 >= tokens * 4 and tonumber(c[4] or '0') ~= start then
    redis.call('HSET', h, 'bt', start)
    ev_emit(id .. level:sub(1, 1) .. 't', 'budget.threshold', data)
  end
  if want.exceeded and (refused or spent >= tokens) and tonumber(c[5] or '0') ~= start then
    redis.call('HSET', h, 'bx', start)
    ev_emit(id .. level:sub(1, 1) .. 'x', 'budget.exceeded', data)
  end
end
`;

/** `base` run as a function after `before`, its reply in `reply` for `after`; replies {to mark, reply}. */
export function withEvents(base: string, before: string, after: string): string {
  return `${EVENT_PROLOGUE}
${before}
local function ev_base()
${base}
end
local reply = ev_base()
${after}
local ev_mark = 0
if ev_written > 0 and redis.call('XLEN', ev_stream) == ev_written then ev_mark = 1 end
return { ev_mark, reply }
`;
}

/**
 * After SETTLE: usage.settled when settled (EV[1] '1', EV[2] request id, EV[3] data), the balance.low test (EV[4]
 * '1', EV[5] event id, EV[6] default threshold), and the budgets' (EV[7] '1': budget.threshold wanted, EV[8] '1':
 * budget.exceeded wanted, EV[9] base event id, EV[10] and EV[11] the ends of this month and the next).
 */
export const AFTER_SETTLE = `
if reply[1] == 'ok' then
  if EV[1] == '1' then ev_emit(EV[2], 'usage.settled', EV[3]) end
  if EV[4] == '1' then ev_low_balance(EV[5], EV[6]) end
  if EV[7] == '1' or EV[8] == '1' then
    local want = { threshold = EV[7] == '1', exceeded = EV[8] == '1' }
    local starts = { day = tonumber(ARGV[12]), week = tonumber(ARGV[13]), month = tonumber(ARGV[14]) }
    local month_ends = { tonumber(EV[10]), tonumber(EV[11]) }
    if ARGV[10] ~= '' then ev_budget(KEYS[2], 'key', ARGV[10], want, starts, month_ends, EV[9], false) end
    ev_budget(KEYS[1], 'account', ARGV[10], want, starts, month_ends, EV[9], false)
  end
end
`;

/**
 * After RESERVE: budget.exceeded when a budget refused the request (run only when an endpoint wants it). EV: base
 * event id, the ends of this month and the next.
 */
export const AFTER_RESERVE = `
if reply[1] == 'budget' then
  local starts = { day = tonumber(ARGV[10]), week = tonumber(ARGV[11]), month = tonumber(ARGV[12]) }
  local h = reply[2] == 'key' and KEYS[2] or KEYS[1]
  ev_budget(h, reply[2], ARGV[7], { exceeded = true }, starts, { tonumber(EV[2]), tonumber(EV[3]) }, EV[1], true)
end
`;

/**
 * After GRANT: package.granted when credited (EV[1] '1', EV[2] event id, EV[3] data), and balance.low's re-arming
 * (EV[4] '1', EV[5] event id, EV[6] default threshold).
 */
export const AFTER_GRANT = `
if reply[1] == 'ok' then
  if EV[1] == '1' then ev_emit(EV[2], 'package.granted', EV[3]) end
  if EV[4] == '1' then ev_low_balance(EV[5], EV[6]) end
end
`;

/** After CREATE_KEY: key.created when made. EV: event id, data. */
export const AFTER_CREATE_KEY = `
if reply == 1 then ev_emit(EV[1], 'key.created', EV[2]) end
`;

/** Before REVOKE: whether the key was live; after it, key.revoked only for its first revocation. EV: event id, data. */
export const BEFORE_REVOKE = `local ev_was = redis.call('HGET', KEYS[1], 'revoked')`;
export const AFTER_REVOKE = `
if reply == 1 and ev_was == '0' then ev_emit(EV[1], 'key.revoked', EV[2]) end
`;

/** Before UPDATE_ACCOUNT: the status; after it, account.disabled when it went from active to disabled. EV: id, data. */
export const BEFORE_UPDATE_ACCOUNT = `local ev_was = redis.call('HGET', KEYS[1], 'status')`;
export const AFTER_UPDATE_ACCOUNT = `
if ev_was == 'active' and redis.call('HGET', KEYS[1], 'status') == 'disabled' then ev_emit(EV[1], 'account.disabled', EV[2]) end
`;

/**
 * ACCOUNT_CREATED: account.created, then package.granted for its trial package, each when its event id is given,
 * written once the account exists. KEYS: a, ev. ARGV: event id ("" for none), data, trial's event id ("" for none), data.
 */
export const ACCOUNT_CREATED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local now = redis.call('TIME')[1]
if ARGV[1] ~= '' then redis.call('XADD', KEYS[2], '*', 'id', ARGV[1], 'type', 'account.created', 'created', now, 'data', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('XADD', KEYS[2], '*', 'id', ARGV[3], 'type', 'package.granted', 'created', now, 'data', ARGV[4]) end
return 1
`;

/**
 * PACKAGE_EXPIRY: package.expiring for each package with tokens left that expires within ARGV warn seconds of ARGV
 * now, and package.expired for each that has expired, each written once per package however many processes sweep:
 * {A}:pe (package id -> 'expiring' | 'expired', the last written) is checked and set in this same step.
 * KEYS: p pe ev. ARGV: now (s), warn (s), '1' expiring wanted, '1' expired wanted, base event id, account id.
 * Reply: the number of events written.
 */
export const PACKAGE_EXPIRY = `
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
`;

/** SET_LOW_BALANCE: sets an existing account's balance.low threshold ("" for the default). KEYS: a. ARGV: tokens. */
export const SET_LOW_BALANCE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'low_at', ARGV[1])
return 1
`;
