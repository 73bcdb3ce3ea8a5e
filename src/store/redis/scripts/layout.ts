/**
 * The Redis layout of accounts and keys and the prologue their scripts share. Every Redis check-and-change tokenmeter
 * makes is one Lua script: the metering path in metering-scripts.ts, accounts, keys and grants in account-scripts.ts,
 * the model level of the limits in limit-scripts.ts. All KEYS of a script belong to one account and
 * share its hash tag `{<account id>}`, so each script runs atomically on a single node, on Redis and Redis Cluster
 * alike. Time comes from the server's TIME, so proxies with skewed clocks agree on leases and expiry.
 *
 * Layout, for account A and its key K (prefix omitted):
 *   {A}:a    HASH  email name password_hash role status created debt reserved ("" email/password_hash: none)
 *                  rl, and bg bp bs bh (the budget, budget-scripts.ts)
 *   {A}:k:K  HASH  hash name prefix created expires_at revoked models limit spent reserved last_used
 *                  requests prompt_tokens completion_tokens (cached_tokens reasoning_tokens) rl bg bp bs bh
 *                  (models: "" for all, else "\n"-joined ids with leading and trailing "\n"; limit: "" for no cap)
 *   {A}:keys SET   the account's key ids
 *   {A}:p    HASH  package id -> "remaining:expires_at:tokens:created" (expires_at 0 = never)
 *   {A}:g    HASH  grant idempotency id -> package id
 *   {A}:r    ZSET  request id -> lease deadline (ms)
 *   {A}:ra   HASH  request id -> "amount:key id" (key id "" for a request without a key), then ":A:K" when the
 *                  account or key has a budget: the start of the period each counted it in (0: not counted)
 *   {A}:s:R  STRING settled marker of request R, the layout before hour buckets: still honoured until it expires
 *   {A}:sh:<hour>, {A}:d:<day>  the settled markers per hour, the daily rollups (ledger-scripts.ts)
 *   {A}:u    STREAM the usage ledger (key_id "" for a request without a key; absent in records from before accounts;
 *                  cached_tokens and reasoning_tokens only when not 0, tool_calls and tool_tokens likewise; since
 *                  27 Nov 2026 no `created` (the entry id's time is the record's) and a UUID request id as `rid`, its
 *                  16 bytes in base64url)
 *   {A}:t    HASH  the account's usage totals (cached_tokens and reasoning_tokens, as in the ledger, once not 0)
 *   {A}:lw {A}:lt {A}:lc, {A}:lw:K {A}:lt:K {A}:lc:K  the account's and key K's rate-limit windows (limit-scripts.ts);
 *                  their limits are the `rl` field of {A}:a and {A}:k:K ("rpm:tpm:max_concurrent"; "" or absent: none)
 * Outside any account's slot, read by plain commands: h:<hash> ("K A", or "K" before accounts, where A = K),
 * ka (HASH key id -> account id), accounts (ZSET of account ids, all scored 0, read in lexical = creation order),
 * email:<email> (account id), schema (the layout version, "2" once the keys of before accounts are migrated),
 * own:<shard>:<bucket> (HASH: the owners of stored Responses API responses and their items, redis-response-owners.ts;
 * with the ledger archive own:<shard>:d<day>, and {own}:sl {own}:sc, the owners shipper's, archive-scripts.ts),
 * resp:<response id> (before own:, one owner per key: read until these expire).
 */

/**
 * Shared prologue: server time, and dropping reservations whose lease ran out. KEYS[1] is always the account hash
 * {A}:a, so a key's hash {A}:k:K is found from it: same slot, by construction.
 */
export const NOW_AND_PURGE = `
local t = redis.call('TIME')
local now_s = tonumber(t[1])
local now_ms = now_s * 1000 + math.floor(tonumber(t[2]) / 1000)
local key_base = string.sub(KEYS[1], 1, -2) .. 'k:'
-- Gives back what a reservation held of a budget, when its period is still the one counted.
local function budget_unhold(h, counted, amount)
  if counted ~= '' and counted ~= '0' and tonumber(redis.call('HGET', h, 'bp')) == tonumber(counted) then
    redis.call('HINCRBY', h, 'bh', -amount)
  end
end
-- Returns a reservation's amount to its account and key (and budgets); the periods it counted in ('' for none).
local function unhold(a, held)
  local amount, key, account_p, key_p = string.match(held, '^(%d+):([^:]*):?(%d*):?(%d*)$')
  amount = tonumber(amount)
  redis.call('HINCRBY', a, 'reserved', -amount)
  if key ~= '' then redis.call('HINCRBY', key_base .. key, 'reserved', -amount) end
  if account_p ~= '' then
    budget_unhold(a, account_p, amount)
    if key ~= '' then budget_unhold(key_base .. key, key_p, amount) end
  end
  return account_p, key_p
end
local function purge(a, r, ra)
  local stale = redis.call('ZRANGEBYSCORE', r, '-inf', now_ms)
  if #stale == 0 then return end
  for i = 1, #stale do
    local held = redis.call('HGET', ra, stale[i])
    if held then
      unhold(a, held)
      redis.call('HDEL', ra, stale[i])
    end
  end
  redis.call('ZREMRANGEBYSCORE', r, '-inf', now_ms)
end
-- Drops a request's reservation; false when it held none, else the periods its budgets counted it in.
local function drop_reservation(a, r, ra, id)
  local held = redis.call('HGET', ra, id)
  if not held then return false end
  redis.call('HDEL', ra, id)
  redis.call('ZREM', r, id)
  local account_p, key_p = unhold(a, held)
  return {account_p, key_p}
end
local function live_balance(p)
  local balance = 0
  local values = redis.call('HVALS', p)
  for i = 1, #values do
    local rem, exp = string.match(values[i], '^(%d+):(%d+)')
    exp = tonumber(exp)
    if exp == 0 or exp > now_s then balance = balance + tonumber(rem) end
  end
  return balance
end
`;
