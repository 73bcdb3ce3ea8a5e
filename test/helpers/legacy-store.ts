/**
 * Writes a Redis store the way tokenmeter did before accounts (commit 8c3d58b), so the upgrade can be tested on a store
 * the old version wrote. The Lua below is a frozen copy of that version's scripts: never edit it to match today's.
 * Layout, for key id K: {K}:k (key, debt, reserved), {K}:p, {K}:r, {K}:ra, {K}:s:R, {K}:u, {K}:t, h:<hash> -> K, keys.
 */
import type Redis from 'ioredis';
import { randomBytes } from 'node:crypto';

const NOW_AND_PURGE = `
local t = redis.call('TIME')
local now_s = tonumber(t[1])
local now_ms = now_s * 1000 + math.floor(tonumber(t[2]) / 1000)
local function purge(k, r, ra)
  local stale = redis.call('ZRANGEBYSCORE', r, '-inf', now_ms)
  if #stale == 0 then return end
  local freed = 0
  for i = 1, #stale do
    freed = freed + tonumber(redis.call('HGET', ra, stale[i]) or '0')
    redis.call('HDEL', ra, stale[i])
  end
  redis.call('ZREMRANGEBYSCORE', r, '-inf', now_ms)
  redis.call('HINCRBY', k, 'reserved', -freed)
end
local function drop_reservation(k, r, ra, id)
  local amount = redis.call('HGET', ra, id)
  if not amount then return 0 end
  redis.call('HDEL', ra, id)
  redis.call('ZREM', r, id)
  redis.call('HINCRBY', k, 'reserved', -tonumber(amount))
  return 1
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

const RESERVE = `${NOW_AND_PURGE}
local key = redis.call('HMGET', KEYS[1], 'revoked', 'expires_at', 'models', 'debt', 'reserved')
if not key[1] then return {'invalid', 'not_found'} end
if key[1] ~= '0' then return {'invalid', 'revoked'} end
local expires = tonumber(key[2])
if expires > 0 and expires <= now_s then return {'invalid', 'expired'} end
if key[3] ~= '' and not string.find(key[3], '\\n' .. ARGV[6] .. '\\n', 1, true) then return {'model'} end
purge(KEYS[1], KEYS[3], KEYS[4])
-- A request that reserves again (with a better prompt count) replaces what it holds.
local prior = tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved'))
local available = live_balance(KEYS[2]) - tonumber(key[4]) - reserved + prior
local fixed, unit, allowance = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if available < fixed + unit then
  drop_reservation(KEYS[1], KEYS[3], KEYS[4], ARGV[1])
  return {'short', available}
end
local per = math.min(allowance, math.floor((available - fixed) / unit))
local amount = math.ceil(fixed + per * unit)
redis.call('ZADD', KEYS[3], now_ms + tonumber(ARGV[5]), ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], amount)
redis.call('HINCRBY', KEYS[1], 'reserved', amount - prior)
return {'ok', per, amount}
`;

const SETTLE = `${NOW_AND_PURGE}
if redis.call('EXISTS', KEYS[5]) == 1 then return {'duplicate'} end
drop_reservation(KEYS[1], KEYS[3], KEYS[4], ARGV[1])
local left = tonumber(ARGV[2])
if left > 0 then
  local flat = redis.call('HGETALL', KEYS[2])
  local live = {}
  for i = 1, #flat, 2 do
    local rem, exp, rest = string.match(flat[i + 1], '^(%d+):(%d+)(.*)$')
    rem, exp = tonumber(rem), tonumber(exp)
    if rem > 0 and (exp == 0 or exp > now_s) then
      live[#live + 1] = { id = flat[i], rem = rem, exp = exp, rest = rest, order = exp == 0 and math.huge or exp }
    end
  end
  table.sort(live, function(a, b)
    if a.order ~= b.order then return a.order < b.order end
    return a.id < b.id
  end)
  for i = 1, #live do
    if left == 0 then break end
    local pkg = live[i]
    local take = math.min(left, pkg.rem)
    left = left - take
    redis.call('HSET', KEYS[2], pkg.id, string.format('%d:%d', pkg.rem - take, pkg.exp) .. pkg.rest)
  end
  if left > 0 then redis.call('HINCRBY', KEYS[1], 'debt', left) end
end
local id = redis.call('XADD', KEYS[6], '*',
  'request_id', ARGV[1], 'model', ARGV[5], 'prompt_tokens', ARGV[3], 'completion_tokens', ARGV[4],
  'charged_tokens', ARGV[2], 'estimated', ARGV[6], 'stream', ARGV[7], 'status', ARGV[8], 'created', now_s)
redis.call('HINCRBY', KEYS[7], 'requests', 1)
redis.call('HINCRBY', KEYS[7], 'prompt_tokens', ARGV[3])
redis.call('HINCRBY', KEYS[7], 'completion_tokens', ARGV[4])
redis.call('HINCRBY', KEYS[7], 'charged_tokens', ARGV[2])
redis.call('SET', KEYS[5], id, 'EX', ARGV[9])
return {'ok', id}
`;

const GRANT = `
local t = redis.call('TIME')
local now_s = tonumber(t[1])
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not_found'} end
local debt = tonumber(redis.call('HGET', KEYS[1], 'debt') or '0')
local tokens = tonumber(ARGV[2])
local remaining = tokens
if debt > 0 then
  local paid = math.min(debt, tokens)
  remaining = tokens - paid
  redis.call('HINCRBY', KEYS[1], 'debt', -paid)
end
redis.call('HSET', KEYS[2], ARGV[1], string.format('%d:%d:%d:%d', remaining, tonumber(ARGV[3]), tokens, now_s))
return {'ok', remaining, now_s}
`;

const REVOKE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'revoked') == '0' then
  redis.call('HSET', KEYS[1], 'revoked', redis.call('TIME')[1])
end
return 1
`;

export interface LegacySettlement {
  requestId: string;
  charged: number;
  prompt: number;
  completion: number;
  model: string;
}

/** The old version's store operations, one script each as it ran them. */
export class LegacyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private k(id: string, part: string): string {
    return `${this.prefix}{${id}}:${part}`;
  }

  async createKey(hash: string, name: string, models: string[] | null = null): Promise<string> {
    const id = `key_${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
    await this.redis.hset(this.k(id, 'k'), {
      hash,
      name,
      prefix: 'sk-legacy',
      created: Math.floor(Date.now() / 1000),
      expires_at: 0,
      revoked: 0,
      models: models ? `\n${models.join('\n')}\n` : '',
      debt: 0,
      reserved: 0,
    });
    await this.redis.set(`${this.prefix}h:${hash}`, id, 'NX');
    await this.redis.sadd(`${this.prefix}keys`, id);
    return id;
  }

  async grant(keyId: string, tokens: number, expiresAt = 0): Promise<void> {
    const id = `pkg_${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
    await this.redis.eval(GRANT, 2, this.k(keyId, 'k'), this.k(keyId, 'p'), id, tokens, expiresAt);
  }

  async reserve(keyId: string, requestId: string, fixed: number, allowance: number): Promise<unknown> {
    const keys = ['k', 'p', 'r', 'ra'].map((part) => this.k(keyId, part));
    return this.redis.eval(RESERVE, 4, ...keys, requestId, fixed, 1, allowance, 60_000, 'acme/m1');
  }

  async settle(keyId: string, s: LegacySettlement): Promise<unknown> {
    const keys = [
      this.k(keyId, 'k'),
      this.k(keyId, 'p'),
      this.k(keyId, 'r'),
      this.k(keyId, 'ra'),
      this.k(keyId, `s:${s.requestId}`),
      this.k(keyId, 'u'),
      this.k(keyId, 't'),
    ];
    return this.redis.eval(SETTLE, 7, ...keys, s.requestId, s.charged, s.prompt, s.completion, s.model, 0, 0, 200, 86_400);
  }

  async revoke(keyId: string): Promise<void> {
    await this.redis.eval(REVOKE, 1, this.k(keyId, 'k'));
  }
}
