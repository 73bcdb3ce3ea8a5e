/** The shared store: Redis or Redis Cluster through ioredis; every check-and-change is one Lua script on one account's slot. */
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, Limits } from '../limits/limits';
import { DEFAULT_WINDOW_MS, encodeLimits } from '../limits/limits';
import { defineScript, RedisModelLimits } from './redis-limits';
import { matchesSearch, newId } from './ids';
import { readLedgers } from './redis-ledger';
import { migrateLegacyKeys } from './redis-migration';
import {
  StoreReplyError,
  pairs,
  parseAccount,
  parseAccountState,
  parseKeyRecord,
  parseKeyRef,
  parseKeyState,
  parsePackage,
  parseReserveReply,
  tuple,
} from './redis-records';
import * as scripts from './scripts';
import {
  SETTLE_DEDUP_SECONDS,
  type AccountPatch,
  type AccountQuery,
  type AccountRecord,
  type AccountState,
  type CreateAccountResult,
  type GrantOptions,
  type GrantResult,
  type KeyPatch,
  type KeyRecord,
  type KeyRef,
  type KeyState,
  type NewAccount,
  type NewKey,
  type NewPackage,
  type ReserveRequest,
  type ReserveResult,
  type Settlement,
  type SettleResult,
  type Store,
  type UsageQuery,
  type UsageRecord,
} from './types';

export { StoreReplyError, parseReserveReply } from './redis-records';

type Client = Redis | Cluster;
const SCRIPTS = {
  tmReserve: scripts.RESERVE,
  tmRenew: scripts.RENEW,
  tmRelease: scripts.RELEASE,
  tmSettle: scripts.SETTLE,
  tmGrant: scripts.GRANT,
  tmCreateKey: scripts.CREATE_KEY,
  tmUpdateAccount: scripts.UPDATE_ACCOUNT,
  tmRevoke: scripts.REVOKE,
  tmAccountState: scripts.ACCOUNT_STATE,
  tmKeyState: scripts.KEY_STATE,
  tmMigrateKey: scripts.MIGRATE_KEY,
};
type ScriptName = keyof typeof SCRIPTS;
type RunScript = ReturnType<typeof defineScript>;

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
  private readonly windowMs: number;
  private readonly run: Record<ScriptName, RunScript>;
  private readonly modelLimits: RedisModelLimits;

  constructor(
    private readonly redis: Client,
    options: RedisStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? 'tm:';
    const run = {} as Record<ScriptName, RunScript>;
    for (const [name, lua] of Object.entries(SCRIPTS) as [ScriptName, string][]) run[name] = defineScript(redis, name, lua);
    this.run = run;
    this.windowMs = options.limitWindowMs ?? DEFAULT_WINDOW_MS;
    this.modelLimits = new RedisModelLimits(redis, this.prefix, this.windowMs);
  }

  /** A key of account `accountId`'s slot. */
  private a(accountId: string, part: string): string {
    return `${this.prefix}{${accountId}}:${part}`;
  }

  private global(name: string): string {
    return `${this.prefix}${name}`;
  }

  /**
   * Moves keys written before accounts into accounts of their own (see MIGRATE_KEY); a no-op once done. Safe to run
   * from several processes at once. Resolves to the number of keys this call migrated.
   */
  migrate(): Promise<number> {
    return migrateLegacyKeys({
      redis: this.redis,
      prefix: this.prefix,
      migrateKey: async (keyId) =>
        Number(
          await this.run.tmMigrateKey(
            [
              this.a(keyId, 'k'),
              this.a(keyId, 'a'),
              this.a(keyId, `k:${keyId}`),
              this.a(keyId, 'keys'),
              this.a(keyId, 'ra'),
              this.a(keyId, 't'),
              this.a(keyId, 'u'),
            ],
            [keyId],
          ),
        ),
    });
  }

  async createAccount(input: NewAccount): Promise<CreateAccountResult> {
    const id = newId('acc');
    const created = Math.floor(Date.now() / 1000);
    await this.redis.hset(this.a(id, 'a'), {
      email: input.email ?? '',
      name: input.name,
      password_hash: input.passwordHash ?? '',
      role: input.role,
      status: input.status,
      created,
      debt: 0,
      reserved: 0,
      rl: encodeLimits(input.limits),
    });
    // The email index lives outside the account's slot: claimed after the account exists, undone when taken, and the
    // account is listed last, so a half-made account is never reachable.
    if (input.email !== null && (await this.redis.set(this.global(`email:${input.email}`), id, 'NX')) === null) {
      await this.redis.del(this.a(id, 'a'));
      return { kind: 'email_taken' };
    }
    await this.redis.zadd(this.global('accounts'), 0, id);
    return { kind: 'created', account: { id, ...input, created, limits: input.limits ?? null } };
  }

  async getAccount(accountId: string): Promise<AccountState | undefined> {
    const reply = await this.run.tmAccountState(
      [this.a(accountId, 'a'), this.a(accountId, 'p'), this.a(accountId, 'r'), this.a(accountId, 'ra'), this.a(accountId, 't')],
      [this.windowMs],
    );
    const parts = tuple(reply, 'ACCOUNT_STATE');
    if (parts.length === 0) return undefined;
    return parseAccountState(accountId, parts as [string[], string[], string[], number, unknown[]]);
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | undefined> {
    const id = await this.redis.get(this.global(`email:${email}`));
    return id === null ? undefined : this.accountRecord(id);
  }

  private async accountRecord(id: string): Promise<AccountRecord | undefined> {
    const h = await this.redis.hgetall(this.a(id, 'a'));
    return h.created === undefined ? undefined : parseAccount(id, h);
  }

  async listAccounts(q: AccountQuery): Promise<AccountRecord[]> {
    const search = q.search?.toLowerCase();
    const out: AccountRecord[] = [];
    let from = q.after !== undefined ? `(${q.after}` : '-';
    const page = Math.max(q.limit, 100);
    while (out.length < q.limit) {
      const ids = await this.redis.zrangebylex(this.global('accounts'), from, '+', 'LIMIT', 0, page);
      const records = await Promise.all(ids.map((id) => this.accountRecord(id)));
      for (const r of records) {
        if (r && (search === undefined || matchesSearch(r, search)) && out.length < q.limit) out.push(r);
      }
      if (ids.length < page) break;
      from = `(${ids[ids.length - 1]}`;
    }
    return out;
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | undefined> {
    const fields: string[] = [];
    if (patch.name !== undefined) fields.push('name', patch.name);
    if (patch.status !== undefined) fields.push('status', patch.status);
    if (patch.role !== undefined) fields.push('role', patch.role);
    if (patch.passwordHash !== undefined) fields.push('password_hash', patch.passwordHash ?? '');
    if (patch.limits !== undefined) fields.push('rl', encodeLimits(patch.limits));
    const flat = tuple(await this.run.tmUpdateAccount([this.a(accountId, 'a')], fields), 'UPDATE_ACCOUNT') as string[];
    return flat.length === 0 ? undefined : parseAccount(accountId, pairs(flat));
  }

  async createKey(accountId: string, input: NewKey): Promise<KeyRecord | undefined> {
    const id = newId('key');
    const created = Math.floor(Date.now() / 1000);
    const limit = input.limitTokens ?? null;
    const fields = {
      hash: input.hash,
      name: input.name,
      prefix: input.prefix,
      created,
      expires_at: input.expiresAt ?? 0,
      revoked: 0,
      models: input.models ? `\n${input.models.join('\n')}\n` : '',
      limit: limit ?? '',
      spent: 0,
      reserved: 0,
      last_used: '',
      rl: encodeLimits(input.limits),
    };
    const made = await this.run.tmCreateKey(
      [this.a(accountId, 'a'), this.a(accountId, `k:${id}`), this.a(accountId, 'keys')],
      [id, ...Object.entries(fields).flat()],
    );
    if (Number(made) !== 1) return undefined;
    // The lookup indexes live outside the account's slot; written last, so a half-made key is never reachable.
    await this.redis.hset(this.global('ka'), id, accountId);
    await this.redis.set(this.global(`h:${input.hash}`), `${id} ${accountId}`, 'NX');
    return {
      id,
      accountId,
      name: input.name,
      prefix: input.prefix,
      created,
      expiresAt: input.expiresAt,
      revokedAt: null,
      models: input.models,
      limitTokens: limit,
      spentTokens: 0,
      lastUsed: null,
      limits: input.limits ?? null,
    };
  }

  async updateKey(keyId: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    const accountId = await this.accountOfKey(keyId);
    if (accountId === undefined) return undefined;
    const fields: string[] = [];
    if (patch.limits !== undefined) fields.push('rl', encodeLimits(patch.limits));
    // UPDATE_ACCOUNT sets fields of a hash that exists, whichever hash of the slot it is given.
    const flat = tuple(await this.run.tmUpdateAccount([this.a(accountId, `k:${keyId}`)], fields), 'UPDATE_ACCOUNT') as string[];
    return flat.length === 0 ? undefined : parseKeyRecord(keyId, accountId, pairs(flat));
  }

  async grantPackage(accountId: string, input: NewPackage, options: GrantOptions = {}): Promise<GrantResult> {
    const id = newId('pkg');
    const reply = await this.run.tmGrant(
      [this.a(accountId, 'a'), this.a(accountId, 'p'), this.a(accountId, 'g')],
      [id, input.tokens, input.expiresAt ?? 0, options.once ?? ''],
    );
    const [tag, a, b] = tuple(reply, 'GRANT');
    if (tag === 'not_found') return { kind: 'account_not_found' };
    if (tag === 'duplicate') return { kind: 'duplicate', package: typeof b === 'string' ? parsePackage(String(a), b) : undefined };
    if (tag !== 'ok') throw new StoreReplyError(`GRANT replied ${String(tag)}`);
    return {
      kind: 'granted',
      package: { id, tokens: input.tokens, remaining: Number(a), expiresAt: input.expiresAt, created: Number(b) },
    };
  }

  async findKeyId(hash: string): Promise<KeyRef | undefined> {
    const value = await this.redis.get(this.global(`h:${hash}`));
    return value === null ? undefined : parseKeyRef(value);
  }

  private async accountOfKey(keyId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.global('ka'), keyId)) ?? undefined;
  }

  async getKey(keyId: string): Promise<KeyState | undefined> {
    const accountId = await this.accountOfKey(keyId);
    if (accountId === undefined) return undefined;
    const reply = await this.run.tmKeyState(
      [this.a(accountId, 'a'), this.a(accountId, `k:${keyId}`), this.a(accountId, 'p'), this.a(accountId, 'r'), this.a(accountId, 'ra')],
      [keyId, this.windowMs],
    );
    const parts = tuple(reply, 'KEY_STATE');
    if (parts.length === 0) return undefined;
    return parseKeyState(keyId, accountId, parts as [string[], string[], string[], number, unknown[]]);
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const owners: [string, string][] =
      accountId === undefined
        ? Object.entries(await this.redis.hgetall(this.global('ka')))
        : (await this.redis.smembers(this.a(accountId, 'keys'))).map((id) => [id, accountId]);
    const records = await Promise.all(
      owners.map(async ([id, owner]) => [id, owner, await this.redis.hgetall(this.a(owner, `k:${id}`))] as const),
    );
    return records
      .filter(([, , h]) => h.created !== undefined)
      .map(([id, owner, h]) => parseKeyRecord(id, owner, h))
      .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const accountId = await this.accountOfKey(keyId);
    if (accountId === undefined) return false;
    return Number(await this.run.tmRevoke([this.a(accountId, `k:${keyId}`)], [])) === 1;
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const A = r.accountId;
    const reply = await this.run.tmReserve(
      [this.a(A, 'a'), this.a(A, `k:${r.keyId ?? ''}`), this.a(A, 'p'), this.a(A, 'r'), this.a(A, 'ra')],
      [r.requestId, r.fixed, r.unit, r.allowance, r.leaseMs, r.model, r.keyId ?? '', this.windowMs, r.defaultAllowance ? 1 : 0],
    );
    return parseReserveReply(reply);
  }

  async renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean> {
    const keys = [this.a(accountId, 'a'), this.a(accountId, 'r'), this.a(accountId, 'ra')];
    return Number(await this.run.tmRenew(keys, [requestId, leaseMs])) === 1;
  }

  async release(accountId: string, requestId: string): Promise<void> {
    await this.run.tmRelease([this.a(accountId, 'a'), this.a(accountId, 'r'), this.a(accountId, 'ra')], [requestId, this.windowMs]);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const A = s.accountId;
    const reply = await this.run.tmSettle(
      [
        this.a(A, 'a'),
        this.a(A, `k:${s.keyId ?? ''}`),
        this.a(A, 'p'),
        this.a(A, 'r'),
        this.a(A, 'ra'),
        this.a(A, `s:${s.requestId}`),
        this.a(A, 'u'),
        this.a(A, 't'),
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
        s.keyId ?? '',
        this.windowMs,
      ],
    );
    const [tag] = tuple(reply, 'SETTLE');
    if (tag === 'ok') return 'settled';
    if (tag === 'duplicate') return 'duplicate';
    throw new StoreReplyError(`SETTLE replied ${String(tag)}`);
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    let ids: string[];
    if (q.accountId !== undefined) ids = [q.accountId];
    else if (q.keyId !== undefined) ids = [await this.accountOfKey(q.keyId)].filter((id): id is string => id !== undefined);
    else ids = await this.redis.zrange(this.global('accounts'), 0, -1);
    return readLedgers(this.redis, ids, (id) => this.a(id, 'u'), q);
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
