/**
 * The zero-setup store for a single process (nothing survives a restart; it keeps the last `ledgerLimit` usage
 * records per account). Each method's check-and-change runs synchronously, so it is atomic in
 * Node's event loop, with the same semantics as the Redis scripts (shared contract tests keep them equal).
 */
import { DEFAULT_WINDOW_MS, type AdmitResult, type LevelUse, type LimitCheck, type LimitEnd, type Limits } from '../../limits/limits';
import { LimitWindow } from '../../limits/limit-window';
import { matchesSearch, newId } from '../ids';
import { readLedgers } from './memory-ledger';
import { MemoryMetering } from './memory-metering';
import { capLeft, copyKey, zeroTotals, type Account, type Key } from './memory-records';
import { MemoryModelLimits } from './memory-model-limits';
import {
  type AccountPatch,
  type AccountQuery,
  type AccountRecord,
  type AccountState,
  type CreateAccountResult,
  type GrantOptions,
  type GrantResult,
  type NewAccount,
  type NewPackage,
} from '../records/account';
import { type KeyPatch, type KeyRecord, type KeyRef, type KeyState, type NewKey } from '../records/key';
import {
  type ReserveRequest,
  type ReserveResult,
  type Settlement,
  type SettleResult,
  type UsageQuery,
  type UsageRecord,
} from '../records/metering';
import { type Store } from '../ports/store';
import { type TokenPackage } from '../records/common';

export interface MemoryStoreOptions {
  /** The clock, in ms. Default Date.now. */
  now?: () => number;
  /** Usage records kept per account; older ones are dropped (totals and balances stay exact). Default 10000. */
  ledgerLimit?: number;
  /**
   * How long a settled request is remembered to refuse a duplicate. A settle into memory cannot fail, so nothing is
   * ever retried late: ten minutes, not Redis's day, keeps the heap from growing with traffic. Default 600 s.
   */
  settleDedupSeconds?: number;
  /** Length of the rpm and tpm windows. Default 60 s. */
  limitWindowMs?: number;
}

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  private readonly accounts = new Map<string, Account>();
  private readonly byEmail = new Map<string, string>();
  private readonly keys = new Map<string, Key>();
  private readonly byHash = new Map<string, KeyRef>();
  private readonly now: () => number;
  private readonly windowMs: number;
  private readonly modelLimits: MemoryModelLimits;
  private readonly metering: MemoryMetering;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.windowMs = options.limitWindowMs ?? DEFAULT_WINDOW_MS;
    this.modelLimits = new MemoryModelLimits(this.now, this.windowMs);
    this.metering = new MemoryMetering(this.accounts, this.keys, {
      now: this.now,
      ledgerLimit: options.ledgerLimit ?? 10_000,
      dedupMs: (options.settleDedupSeconds ?? 600) * 1000,
      windowMs: this.windowMs,
    });
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  async createAccount(input: NewAccount): Promise<CreateAccountResult> {
    if (input.email !== null && this.byEmail.has(input.email)) return { kind: 'email_taken' };
    const record: AccountRecord = { id: newId('acc'), ...input, created: this.seconds(), limits: input.limits ?? null };
    this.accounts.set(record.id, {
      record,
      packages: [],
      reservations: new Map(),
      reserved: 0,
      debt: 0,
      ledger: [],
      totals: zeroTotals(),
      settled: new Map(),
      grants: new Map(),
      keys: [],
    });
    if (input.email !== null) this.byEmail.set(input.email, record.id);
    return { kind: 'created', account: { ...record } };
  }

  async getAccount(accountId: string): Promise<AccountState | undefined> {
    const acc = this.accounts.get(accountId);
    if (!acc) return undefined;
    this.metering.purge(acc);
    return {
      ...acc.record,
      balance: this.metering.available(acc),
      reserved: acc.reserved,
      debt: acc.debt,
      packages: acc.packages.map((p) => ({ ...p })),
      usage: { ...acc.totals },
      limitUse: acc.record.limits && (acc.window ?? new LimitWindow(this.windowMs)).use(acc.record.limits, this.now()),
    };
  }

  async getAccounts(accountIds: readonly string[]): Promise<(AccountState | undefined)[]> {
    return Promise.all(accountIds.map((id) => this.getAccount(id)));
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | undefined> {
    const id = this.byEmail.get(email);
    const acc = id === undefined ? undefined : this.accounts.get(id);
    return acc ? { ...acc.record } : undefined;
  }

  async listAccounts(q: AccountQuery): Promise<AccountRecord[]> {
    const search = q.search?.toLowerCase();
    const out: AccountRecord[] = [];
    for (const id of [...this.accounts.keys()].sort()) {
      if (q.after !== undefined && id <= q.after) continue;
      const { record } = this.accounts.get(id) as Account;
      if (search !== undefined && !matchesSearch(record, search)) continue;
      out.push({ ...record });
      if (out.length >= q.limit) break;
    }
    return out;
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | undefined> {
    const acc = this.accounts.get(accountId);
    if (!acc) return undefined;
    if (patch.name !== undefined) acc.record.name = patch.name;
    if (patch.status !== undefined) acc.record.status = patch.status;
    if (patch.role !== undefined) acc.record.role = patch.role;
    if (patch.passwordHash !== undefined) acc.record.passwordHash = patch.passwordHash;
    if (patch.limits !== undefined) acc.record.limits = patch.limits;
    return { ...acc.record };
  }

  async createKey(accountId: string, input: NewKey): Promise<KeyRecord | undefined> {
    const acc = this.accounts.get(accountId);
    if (!acc) return undefined;
    const record: KeyRecord = {
      id: newId('key'),
      accountId,
      name: input.name,
      prefix: input.prefix,
      created: this.seconds(),
      expiresAt: input.expiresAt,
      revokedAt: null,
      models: input.models ? [...input.models] : null,
      limitTokens: input.limitTokens ?? null,
      spentTokens: 0,
      lastUsed: null,
      limits: input.limits ?? null,
    };
    this.keys.set(record.id, { record, reserved: 0, usage: zeroTotals() });
    acc.keys.push(record.id);
    if (!this.byHash.has(input.hash)) this.byHash.set(input.hash, { keyId: record.id, accountId });
    return copyKey(record);
  }

  async grantPackage(accountId: string, input: NewPackage, options: GrantOptions = {}): Promise<GrantResult> {
    const acc = this.accounts.get(accountId);
    if (!acc) return { kind: 'account_not_found' };
    if (options.once !== undefined) {
      const earlier = acc.grants.get(options.once);
      if (earlier !== undefined) {
        const pkg = acc.packages.find((p) => p.id === earlier);
        return { kind: 'duplicate', package: pkg && { ...pkg } };
      }
    }
    const paid = Math.min(acc.debt, input.tokens);
    acc.debt -= paid;
    const pkg: TokenPackage = {
      id: newId('pkg'),
      tokens: input.tokens,
      remaining: input.tokens - paid,
      expiresAt: input.expiresAt,
      created: this.seconds(),
    };
    acc.packages.push(pkg);
    if (options.once !== undefined) acc.grants.set(options.once, pkg.id);
    return { kind: 'granted', package: { ...pkg } };
  }

  async findKeyId(hash: string): Promise<KeyRef | undefined> {
    const ref = this.byHash.get(hash);
    return ref && { ...ref };
  }

  async getKey(keyId: string): Promise<KeyState | undefined> {
    const key = this.keys.get(keyId);
    if (!key) return undefined;
    const acc = this.accounts.get(key.record.accountId) as Account;
    this.metering.purge(acc);
    return {
      ...copyKey(key.record),
      balance: Math.min(this.metering.available(acc), capLeft(key)),
      reserved: key.reserved,
      debt: acc.debt,
      packages: acc.packages.map((p) => ({ ...p })),
      usage: { ...key.usage },
      limitUse: key.record.limits && (key.window ?? new LimitWindow(this.windowMs)).use(key.record.limits, this.now()),
    };
  }

  async updateKey(keyId: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    const key = this.keys.get(keyId);
    if (!key) return undefined;
    if (patch.limits !== undefined) key.record.limits = patch.limits;
    return copyKey(key.record);
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const ids = accountId === undefined ? [...this.keys.keys()] : (this.accounts.get(accountId)?.keys ?? []);
    return ids.map((id) => copyKey((this.keys.get(id) as Key).record));
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const key = this.keys.get(keyId);
    if (!key) return false;
    key.record.revokedAt ??= this.seconds();
    return true;
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    return this.metering.reserve(r);
  }

  async renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean> {
    return this.metering.renew(accountId, requestId, leaseMs);
  }

  async release(accountId: string, requestId: string): Promise<void> {
    this.metering.release(accountId, requestId);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    return this.metering.settle(s);
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    const accountId = q.accountId ?? (q.keyId !== undefined ? this.keys.get(q.keyId)?.record.accountId : undefined);
    const scoped = q.accountId !== undefined || q.keyId !== undefined;
    const accounts = scoped ? [this.accounts.get(accountId ?? '')].filter((a): a is Account => !!a) : [...this.accounts.values()];
    return readLedgers(accounts, q);
  }

  async admitModel(model: string, check: LimitCheck): Promise<AdmitResult> {
    return this.modelLimits.admit(model, check);
  }

  async endModel(model: string, requestId: string, how: LimitEnd): Promise<void> {
    this.modelLimits.end(model, requestId, how);
  }

  async renewModel(model: string, requestId: string, leaseMs: number): Promise<void> {
    this.modelLimits.renew(model, requestId, leaseMs);
  }

  async modelUse(model: string, limits: Limits): Promise<LevelUse> {
    return this.modelLimits.use(model, limits);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}
