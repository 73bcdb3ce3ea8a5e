/** The shared store: Redis or Redis Cluster through ioredis; every check-and-change is one Lua script. */
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, Limits } from '../limits/limits';
import { DEFAULT_WINDOW_MS } from '../limits/limits';
import { compareCursor, newId } from './ids';
import { defineScript, RedisModelLimits } from './redis-limits';
import * as scripts from './scripts';
import {
  SETTLE_DEDUP_SECONDS,
  type KeyRecord,
  type KeyState,
  type NewKey,
  type NewPackage,
  type ReserveRequest,
  type ReserveResult,
  type Settlement,
  type SettleResult,
  type Store,
  type TokenPackage,
  type UsageQuery,
  type UsageRecord,
} from './types';

type Client = Redis | Cluster;
type ScriptName = 'tmReserve' | 'tmRenew' | 'tmRelease' | 'tmSettle' | 'tmGrant' | 'tmRevoke' | 'tmState';
type RunScript = ReturnType<typeof defineScript>;

/** A reply of a shape no script of ours returns: the store is not the one we think it is. */
export class StoreReplyError extends Error {
  override name = 'StoreReplyError';
}

export interface RedisStoreOptions {
  /** Prefix of every key we write. Default `tm:`. */
  prefix?: string;
  /** Length of the rpm and tpm windows. Default 60 s. */
  limitWindowMs?: number;
}

/** ioredis options for a store that fails closed: no offline queue, bounded command time, endless reconnects. */
export function redisClientOptions(commandTimeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    // Commands issued in the same tick (many requests' RESERVE and SETTLE under load) go out in one write.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    // ioredis waits this long for a closing socket; on a socket that is already dead its timer would only linger.
    disconnectTimeout: 200,
  };
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  private readonly prefix: string;
  private readonly run: Record<ScriptName, RunScript>;
  private readonly modelLimits: RedisModelLimits;

  constructor(
    private readonly redis: Client,
    options: RedisStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? 'tm:';
    const defs: [ScriptName, string][] = [
      ['tmReserve', scripts.RESERVE],
      ['tmRenew', scripts.RENEW],
      ['tmRelease', scripts.RELEASE],
      ['tmSettle', scripts.SETTLE],
      ['tmGrant', scripts.GRANT],
      ['tmRevoke', scripts.REVOKE],
      ['tmState', scripts.STATE],
    ];
    const run = {} as Record<ScriptName, RunScript>;
    for (const [name, lua] of defs) run[name] = defineScript(redis, name, lua);
    this.run = run;
    this.modelLimits = new RedisModelLimits(redis, this.prefix, options.limitWindowMs ?? DEFAULT_WINDOW_MS);
  }

  private k(id: string, part: string): string {
    return `${this.prefix}{${id}}:${part}`;
  }

  async createKey(input: NewKey): Promise<KeyRecord> {
    const id = newId('key');
    const created = Math.floor(Date.now() / 1000);
    await this.redis.hset(this.k(id, 'k'), {
      hash: input.hash,
      name: input.name,
      prefix: input.prefix,
      created,
      expires_at: input.expiresAt ?? 0,
      revoked: 0,
      models: input.models ? `\n${input.models.join('\n')}\n` : '',
      debt: 0,
      reserved: 0,
    });
    // The lookup index lives outside the key's slot; it is written last, so a half-made key is never reachable.
    await this.redis.set(`${this.prefix}h:${input.hash}`, id, 'NX');
    await this.redis.sadd(`${this.prefix}keys`, id);
    return { id, name: input.name, prefix: input.prefix, created, expiresAt: input.expiresAt, revokedAt: null, models: input.models };
  }

  async grantPackage(keyId: string, input: NewPackage): Promise<TokenPackage | undefined> {
    const id = newId('pkg');
    const reply = await this.run.tmGrant([this.k(keyId, 'k'), this.k(keyId, 'p')], [id, input.tokens, input.expiresAt ?? 0]);
    const [tag, remaining, created] = tuple(reply, 'GRANT');
    if (tag === 'not_found') return undefined;
    if (tag !== 'ok') throw new StoreReplyError(`GRANT replied ${String(tag)}`);
    return { id, tokens: input.tokens, remaining: Number(remaining), expiresAt: input.expiresAt, created: Number(created) };
  }

  async findKeyId(hash: string): Promise<string | undefined> {
    return (await this.redis.get(`${this.prefix}h:${hash}`)) ?? undefined;
  }

  async getKey(keyId: string): Promise<KeyState | undefined> {
    const reply = await this.run.tmState(
      [this.k(keyId, 'k'), this.k(keyId, 'p'), this.k(keyId, 'r'), this.k(keyId, 'ra'), this.k(keyId, 't')],
      [],
    );
    const parts = tuple(reply, 'STATE');
    if (parts.length === 0) return undefined;
    const [keyFlat, pkgFlat, totalsFlat, now] = parts as [string[], string[], string[], number];
    const key = pairs(keyFlat);
    const totals = pairs(totalsFlat);
    const packages = Object.entries(pairs(pkgFlat)).map(([id, v]) => parsePackage(id, v));
    const debt = Number(key.debt ?? 0);
    const reserved = Number(key.reserved ?? 0);
    const live = packages.reduce((sum, p) => (p.expiresAt === null || p.expiresAt > now ? sum + p.remaining : sum), 0);
    return {
      ...parseKeyRecord(keyId, key),
      balance: live - debt - reserved,
      reserved,
      debt,
      packages: packages.sort((a, b) => a.created - b.created || a.id.localeCompare(b.id)),
      usage: {
        requests: Number(totals.requests ?? 0),
        promptTokens: Number(totals.prompt_tokens ?? 0),
        completionTokens: Number(totals.completion_tokens ?? 0),
        chargedTokens: Number(totals.charged_tokens ?? 0),
      },
    };
  }

  async listKeys(): Promise<KeyRecord[]> {
    const ids = await this.redis.smembers(`${this.prefix}keys`);
    const records = await Promise.all(ids.map(async (id) => [id, await this.redis.hgetall(this.k(id, 'k'))] as const));
    return records
      .filter(([, h]) => h.created !== undefined)
      .map(([id, h]) => parseKeyRecord(id, h))
      .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  }

  async revokeKey(keyId: string): Promise<boolean> {
    return Number(await this.run.tmRevoke([this.k(keyId, 'k')], [])) === 1;
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const reply = await this.run.tmReserve(
      [this.k(r.keyId, 'k'), this.k(r.keyId, 'p'), this.k(r.keyId, 'r'), this.k(r.keyId, 'ra')],
      [r.requestId, r.fixed, r.unit, r.allowance, r.leaseMs, r.model],
    );
    return parseReserveReply(reply);
  }

  async renew(keyId: string, requestId: string, leaseMs: number): Promise<boolean> {
    return Number(await this.run.tmRenew([this.k(keyId, 'r')], [requestId, leaseMs])) === 1;
  }

  async release(keyId: string, requestId: string): Promise<void> {
    await this.run.tmRelease([this.k(keyId, 'k'), this.k(keyId, 'r'), this.k(keyId, 'ra')], [requestId]);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const reply = await this.run.tmSettle(
      [
        this.k(s.keyId, 'k'),
        this.k(s.keyId, 'p'),
        this.k(s.keyId, 'r'),
        this.k(s.keyId, 'ra'),
        this.k(s.keyId, `s:${s.requestId}`),
        this.k(s.keyId, 'u'),
        this.k(s.keyId, 't'),
      ],
      [
        s.requestId,
        s.chargedTokens,
        s.promptTokens,
        s.completionTokens,
        s.model,
        s.estimated ? 1 : 0,
        s.stream ? 1 : 0,
        s.status,
        SETTLE_DEDUP_SECONDS,
      ],
    );
    const [tag] = tuple(reply, 'SETTLE');
    if (tag === 'ok') return 'settled';
    if (tag === 'duplicate') return 'duplicate';
    throw new StoreReplyError(`SETTLE replied ${String(tag)}`);
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    const ids = q.keyId ? [q.keyId] : await this.redis.smembers(`${this.prefix}keys`);
    const all: UsageRecord[] = [];
    for (const id of ids) all.push(...(await this.readLedger(id, q)));
    all.sort((a, b) => compareCursor(a.cursor, b.cursor));
    return q.after !== undefined ? all.slice(0, q.limit) : all.slice(Math.max(0, all.length - q.limit));
  }

  /** One key's matching records: the first `limit` after a cursor, else the last `limit`; oldest first either way. */
  private async readLedger(id: string, q: UsageQuery): Promise<UsageRecord[]> {
    const key = this.k(id, 'u');
    const low = q.after !== undefined ? `(${q.after}` : q.since !== undefined ? String(q.since * 1000) : '-';
    const high = q.until !== undefined ? String(q.until * 1000 + 999) : '+';
    const page = Math.max(q.limit, 100);
    const out: UsageRecord[] = [];
    const forward = q.after !== undefined;
    let from = forward ? low : high;
    while (out.length < q.limit) {
      const entries = forward
        ? await this.redis.xrange(key, from, high, 'COUNT', page)
        : await this.redis.xrevrange(key, from, low, 'COUNT', page);
      for (const [cursor, fields] of entries) {
        const rec = parseUsageEntry(id, cursor, fields);
        if (q.model === undefined || rec.model === q.model) out.push(rec);
      }
      if (entries.length < page) break;
      from = `(${entries[entries.length - 1][0]}`;
    }
    const taken = out.slice(0, q.limit);
    return forward ? taken : taken.reverse();
  }

  admitModel(model: string, check: LimitCheck): Promise<AdmitResult> {
    return this.modelLimits.admit(model, check);
  }

  endModel(model: string, requestId: string, how: LimitEnd): Promise<void> {
    return this.modelLimits.end(model, requestId, how);
  }

  renewModel(model: string, requestId: string, leaseMs: number): Promise<void> {
    return this.modelLimits.renew(model, requestId, leaseMs);
  }

  modelUse(model: string, limits: Limits): Promise<LevelUse> {
    return this.modelLimits.use(model, limits);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  /** QUIT when connected (pending replies arrive first), else just drop the connection. */
  async close(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}

/** The one place RESERVE's reply shape is checked. */
export function parseReserveReply(reply: unknown): ReserveResult {
  const [tag, a, b] = tuple(reply, 'RESERVE');
  switch (tag) {
    case 'ok':
      return { kind: 'reserved', allowance: Number(a), amount: Number(b) };
    case 'short':
      return { kind: 'insufficient_quota', available: Number(a) };
    case 'invalid':
      if (a === 'not_found' || a === 'revoked' || a === 'expired') return { kind: 'invalid_key', reason: a };
      break;
    case 'model':
      return { kind: 'model_not_allowed' };
  }
  throw new StoreReplyError(`RESERVE replied ${JSON.stringify(reply)}`);
}

function tuple(reply: unknown, script: string): unknown[] {
  if (!Array.isArray(reply)) throw new StoreReplyError(`${script} replied ${JSON.stringify(reply)}`);
  return reply;
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

function parseKeyRecord(id: string, h: Record<string, string>): KeyRecord {
  const expires = Number(h.expires_at ?? 0);
  const revoked = Number(h.revoked ?? 0);
  const models = h.models ? h.models.split('\n').filter(Boolean) : null;
  return {
    id,
    name: h.name ?? '',
    prefix: h.prefix ?? '',
    created: Number(h.created ?? 0),
    expiresAt: expires > 0 ? expires : null,
    revokedAt: revoked > 0 ? revoked : null,
    models,
  };
}

function parsePackage(id: string, value: string): TokenPackage {
  const [remaining, expires, tokens, created] = value.split(':').map(Number);
  return { id, tokens, remaining, expiresAt: expires > 0 ? expires : null, created };
}

function parseUsageEntry(keyId: string, cursor: string, flat: string[]): UsageRecord {
  const f = pairs(flat);
  return {
    requestId: f.request_id,
    keyId,
    model: f.model,
    promptTokens: Number(f.prompt_tokens),
    completionTokens: Number(f.completion_tokens),
    chargedTokens: Number(f.charged_tokens),
    estimated: f.estimated === '1',
    stream: f.stream === '1',
    status: Number(f.status),
    created: Number(f.created),
    cursor,
  };
}
