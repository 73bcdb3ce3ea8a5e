/**
 * The zero-setup store for a single process (nothing survives a restart; it keeps the last `ledgerLimit` usage
 * records per account). Each method's check-and-change runs synchronously, so it is atomic in
 * Node's event loop, with the same semantics as the Redis scripts (shared contract tests keep them equal).
 */
import { DEFAULT_WINDOW_MS, type AdmitResult, type LevelUse, type LimitCheck, type LimitEnd, type Limits } from '../limits/limits';
import { admitAll, LimitWindow, type HeldLevel } from '../limits/limit-window';
import { compareCursor, matchesSearch, newId } from './ids';
import {
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
  type TokenPackage,
  type UsageQuery,
  type UsageRecord,
  type UsageTotals,
} from './types';

interface Account {
  record: AccountRecord;
  packages: TokenPackage[];
  /** request id -> reserved amount, the key it was reserved on, and lease deadline (ms) */
  reservations: Map<string, { amount: number; keyId: string | null; deadline: number }>;
  reserved: number;
  debt: number;
  ledger: UsageRecord[];
  totals: UsageTotals;
  /** request id -> settled-marker expiry (ms) */
  settled: Map<string, number>;
  /** grant idempotency id -> the package it credited */
  grants: Map<string, string>;
  keys: string[];
  /** The account's rate-limit window, made when it first has limits. */
  window?: LimitWindow;
}

interface Key {
  record: KeyRecord;
  /** Reserved by this key's requests in flight. */
  reserved: number;
  usage: UsageTotals;
  /** The key's rate-limit window, made when it first has limits. */
  window?: LimitWindow;
}

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

const zeroTotals = (): UsageTotals => ({ requests: 0, promptTokens: 0, completionTokens: 0, chargedTokens: 0 });

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  private readonly accounts = new Map<string, Account>();
  private readonly byEmail = new Map<string, string>();
  private readonly keys = new Map<string, Key>();
  private readonly byHash = new Map<string, KeyRef>();
  private readonly now: () => number;
  private readonly ledgerLimit: number;
  private readonly dedupMs: number;
  private readonly windowMs: number;
  /** Model id -> its limit windows; dropped when nothing is held. */
  private readonly modelWindows = new Map<string, LimitWindow>();
  private lastCursorMs = 0;
  private cursorSeq = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.ledgerLimit = options.ledgerLimit ?? 10_000;
    this.dedupMs = (options.settleDedupSeconds ?? 600) * 1000;
    this.windowMs = options.limitWindowMs ?? DEFAULT_WINDOW_MS;
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
    this.purge(acc);
    return {
      ...acc.record,
      balance: this.available(acc),
      reserved: acc.reserved,
      debt: acc.debt,
      packages: acc.packages.map((p) => ({ ...p })),
      usage: { ...acc.totals },
      limitUse: acc.record.limits && (acc.window ?? new LimitWindow(this.windowMs)).use(acc.record.limits, this.now()),
    };
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
    this.purge(acc);
    return {
      ...copyKey(key.record),
      balance: Math.min(this.available(acc), capLeft(key)),
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
    const acc = this.accounts.get(r.accountId);
    const key = r.keyId === null ? undefined : this.keys.get(r.keyId);
    if (r.keyId !== null) {
      if (!key || key.record.accountId !== r.accountId) return { kind: 'invalid_key', reason: 'not_found' };
      if (key.record.revokedAt !== null) return { kind: 'invalid_key', reason: 'revoked' };
      if (key.record.expiresAt !== null && key.record.expiresAt <= this.seconds()) return { kind: 'invalid_key', reason: 'expired' };
    }
    if (!acc) return { kind: 'account_not_found' };
    if (acc.record.status !== 'active') return { kind: 'account_disabled' };
    if (key && key.record.models !== null && !key.record.models.includes(r.model)) return { kind: 'model_not_allowed' };
    this.purge(acc);
    // A request that reserves again (with a better prompt count) replaces what it holds, or drops it when refused.
    const prior = this.dropReservation(acc, r.requestId);
    const levels = this.levels(acc, key);
    const now = this.now();
    const refused = (result: ReserveResult): ReserveResult => {
      if (prior && levels) for (const l of levels) l.window.end(r.requestId, { kind: 'undo' }, now);
      return result;
    };
    const accountLeft = this.available(acc);
    const keyLeft = key ? capLeft(key) : Infinity;
    const available = Math.min(accountLeft, keyLeft);
    if (available < r.fixed + r.unit) {
      return refused({ kind: 'insufficient_quota', available, limitedBy: keyLeft < accountLeft ? 'key' : 'account' });
    }
    let per = Math.min(r.allowance, Math.floor((available - r.fixed) / r.unit));
    // A default allowance (no max_tokens) is lowered to what each tpm could ever admit, as the balance lowers it.
    if (levels && r.defaultAllowance) {
      for (const l of levels)
        if (l.limits.tpm !== undefined) per = Math.max(1, Math.min(per, Math.floor((l.limits.tpm - r.fixed) / r.unit)));
    }
    const amount = Math.ceil(r.fixed + per * r.unit);
    const admitted = levels && admitAll(levels, { tokens: amount, requestId: r.requestId, leaseMs: r.leaseMs }, now);
    if (admitted?.kind === 'rate_limited') return refused(admitted);
    acc.reservations.set(r.requestId, { amount, keyId: r.keyId, deadline: now + r.leaseMs });
    acc.reserved += amount;
    if (key) key.reserved += amount;
    return admitted ? { kind: 'reserved', allowance: per, amount, limitUse: admitted.uses } : { kind: 'reserved', allowance: per, amount };
  }

  async renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean> {
    const acc = this.accounts.get(accountId);
    const held = acc?.reservations.get(requestId);
    if (!acc || !held) return false;
    const now = this.now();
    held.deadline = now + leaseMs;
    for (const l of this.levels(acc, this.keyOf(held.keyId)) ?? []) l.window.renew(requestId, leaseMs, now);
    return true;
  }

  async release(accountId: string, requestId: string): Promise<void> {
    const acc = this.accounts.get(accountId);
    const held = acc?.reservations.get(requestId);
    if (!acc || !held) return;
    for (const l of this.levels(acc, this.keyOf(held.keyId)) ?? []) l.window.end(requestId, { kind: 'release' }, this.now());
    this.dropReservation(acc, requestId);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const acc = this.accounts.get(s.accountId);
    if (!acc) throw new Error(`settle for unknown account ${s.accountId}`);
    const nowMs = this.now();
    const markerExpiry = acc.settled.get(s.requestId);
    if (markerExpiry !== undefined && markerExpiry > nowMs) return 'duplicate';
    this.purge(acc);
    this.dropReservation(acc, s.requestId);
    const key = this.keyOf(s.keyId);
    for (const l of this.levels(acc, key) ?? []) l.window.end(s.requestId, { kind: 'settle', tokens: s.chargedTokens }, nowMs);
    let left = s.chargedTokens;
    const now = this.seconds();
    const live = acc.packages
      .filter((p) => p.remaining > 0 && (p.expiresAt === null || p.expiresAt > now))
      .sort((a, b) => (a.expiresAt ?? Infinity) - (b.expiresAt ?? Infinity) || (a.id < b.id ? -1 : 1));
    for (const pkg of live) {
      if (left === 0) break;
      const take = Math.min(left, pkg.remaining);
      pkg.remaining -= take;
      left -= take;
    }
    acc.debt += left;
    acc.ledger.push({ ...s, created: now, cursor: this.nextCursor(nowMs) });
    addUsage(acc.totals, s);
    if (key) {
      addUsage(key.usage, s);
      key.record.spentTokens += s.chargedTokens;
      key.record.lastUsed = now;
    }
    // Trimmed in batches, so a full ledger costs one array shift per eighth of its size, not one per request.
    if (acc.ledger.length >= this.ledgerLimit + Math.max(1, this.ledgerLimit >> 3))
      acc.ledger.splice(0, acc.ledger.length - this.ledgerLimit);
    acc.settled.set(s.requestId, nowMs + this.dedupMs);
    return 'settled';
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    const accountId = q.accountId ?? (q.keyId !== undefined ? this.keys.get(q.keyId)?.record.accountId : undefined);
    const scoped = q.accountId !== undefined || q.keyId !== undefined;
    const accounts = scoped ? [this.accounts.get(accountId ?? '')].filter((a): a is Account => !!a) : [...this.accounts.values()];
    const out = accounts
      .flatMap((a) => a.ledger)
      .filter(
        (r) =>
          (q.keyId === undefined || r.keyId === q.keyId) &&
          (q.model === undefined || r.model === q.model) &&
          (q.since === undefined || r.created >= q.since) &&
          (q.until === undefined || r.created <= q.until) &&
          (q.after === undefined || compareCursor(r.cursor, q.after) > 0),
      )
      .sort((a, b) => compareCursor(a.cursor, b.cursor))
      .map((r) => ({ ...r }));
    return q.after !== undefined ? out.slice(0, q.limit) : out.slice(Math.max(0, out.length - q.limit));
  }

  async admitModel(model: string, check: LimitCheck): Promise<AdmitResult> {
    let window = this.modelWindows.get(model);
    if (!window) this.modelWindows.set(model, (window = new LimitWindow(this.windowMs)));
    return window.admit('model', check, this.now());
  }

  async endModel(model: string, requestId: string, how: LimitEnd): Promise<void> {
    const window = this.modelWindows.get(model);
    if (!window) return;
    const now = this.now();
    window.end(requestId, how, now);
    if (window.empty(now)) this.modelWindows.delete(model);
  }

  async renewModel(model: string, requestId: string, leaseMs: number): Promise<void> {
    this.modelWindows.get(model)?.renew(requestId, leaseMs, this.now());
  }

  async modelUse(model: string, limits: Limits): Promise<LevelUse> {
    return (this.modelWindows.get(model) ?? new LimitWindow(this.windowMs)).use(limits, this.now());
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private available(acc: Account): number {
    const now = this.seconds();
    const live = acc.packages.reduce((sum, p) => (p.expiresAt === null || p.expiresAt > now ? sum + p.remaining : sum), 0);
    return live - acc.debt - acc.reserved;
  }

  private purge(acc: Account): void {
    const now = this.now();
    for (const [id, held] of acc.reservations) if (held.deadline <= now) this.dropReservation(acc, id);
    // Markers are inserted in expiry order (one fixed TTL), so expired ones are always at the front.
    for (const [id, expiry] of acc.settled) {
      if (expiry > now) break;
      acc.settled.delete(id);
    }
  }

  /** True when the request held a reservation. */
  private dropReservation(acc: Account, requestId: string): boolean {
    const held = acc.reservations.get(requestId);
    if (!held) return false;
    acc.reservations.delete(requestId);
    acc.reserved -= held.amount;
    const key = held.keyId === null ? undefined : this.keys.get(held.keyId);
    if (key) key.reserved -= held.amount;
    return true;
  }

  private keyOf(keyId: string | null): Key | undefined {
    return keyId === null ? undefined : this.keys.get(keyId);
  }

  /** The key's and the account's levels that have limits (key first); undefined when neither has any. */
  private levels(acc: Account, key: Key | undefined): HeldLevel[] | undefined {
    let out: HeldLevel[] | undefined;
    if (key?.record.limits)
      (out ??= []).push({ level: 'key', limits: key.record.limits, window: (key.window ??= new LimitWindow(this.windowMs)) });
    if (acc.record.limits)
      (out ??= []).push({ level: 'account', limits: acc.record.limits, window: (acc.window ??= new LimitWindow(this.windowMs)) });
    return out;
  }

  /** Cursors shaped like Redis stream ids, so readers can treat both stores alike. */
  private nextCursor(nowMs: number): string {
    if (nowMs > this.lastCursorMs) {
      this.lastCursorMs = nowMs;
      this.cursorSeq = 0;
    } else {
      this.cursorSeq += 1;
    }
    return `${this.lastCursorMs}-${this.cursorSeq}`;
  }
}

/** What a key's cap still allows: cap − spent − reserved; unlimited without a cap. */
function capLeft(key: Key): number {
  const cap = key.record.limitTokens;
  return cap === null ? Infinity : cap - key.record.spentTokens - key.reserved;
}

function copyKey(record: KeyRecord): KeyRecord {
  return { ...record, models: record.models ? [...record.models] : null };
}

function addUsage(totals: UsageTotals, s: Settlement): void {
  totals.requests += 1;
  totals.promptTokens += s.promptTokens;
  totals.completionTokens += s.completionTokens;
  totals.chargedTokens += s.chargedTokens;
}
