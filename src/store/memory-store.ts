/**
 * The zero-setup store for a single process (nothing survives a restart; it keeps the last `ledgerLimit` usage
 * records per key). Each method's check-and-change runs synchronously, so it is atomic in
 * Node's event loop, with the same semantics as the Redis scripts (shared contract tests keep them equal).
 */
import { DEFAULT_WINDOW_MS, type AdmitResult, type LevelUse, type LimitCheck, type LimitEnd, type Limits } from '../limits/limits';
import { LimitWindow } from '../limits/limit-window';
import { compareCursor, newId } from './ids';
import {
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

interface Account {
  record: KeyRecord;
  packages: TokenPackage[];
  /** request id -> reserved amount and lease deadline (ms) */
  reservations: Map<string, { amount: number; deadline: number }>;
  reserved: number;
  debt: number;
  ledger: UsageRecord[];
  totals: KeyState['usage'];
  /** request id -> settled-marker expiry (ms) */
  settled: Map<string, number>;
}

export interface MemoryStoreOptions {
  /** The clock, in ms. Default Date.now. */
  now?: () => number;
  /** Usage records kept per key; older ones are dropped (totals and balances stay exact). Default 10000. */
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
  private readonly byHash = new Map<string, string>();
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

  async createKey(input: NewKey): Promise<KeyRecord> {
    const record: KeyRecord = {
      id: newId('key'),
      name: input.name,
      prefix: input.prefix,
      created: this.seconds(),
      expiresAt: input.expiresAt,
      revokedAt: null,
      models: input.models ? [...input.models] : null,
    };
    this.accounts.set(record.id, {
      record,
      packages: [],
      reservations: new Map(),
      reserved: 0,
      debt: 0,
      ledger: [],
      totals: { requests: 0, promptTokens: 0, completionTokens: 0, chargedTokens: 0 },
      settled: new Map(),
    });
    if (!this.byHash.has(input.hash)) this.byHash.set(input.hash, record.id);
    return { ...record };
  }

  async grantPackage(keyId: string, input: NewPackage): Promise<TokenPackage | undefined> {
    const acc = this.accounts.get(keyId);
    if (!acc) return undefined;
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
    return { ...pkg };
  }

  async findKeyId(hash: string): Promise<string | undefined> {
    return this.byHash.get(hash);
  }

  async getKey(keyId: string): Promise<KeyState | undefined> {
    const acc = this.accounts.get(keyId);
    if (!acc) return undefined;
    this.purge(acc);
    return {
      ...acc.record,
      models: acc.record.models ? [...acc.record.models] : null,
      balance: this.available(acc),
      reserved: acc.reserved,
      debt: acc.debt,
      packages: acc.packages.map((p) => ({ ...p })),
      usage: { ...acc.totals },
    };
  }

  async listKeys(): Promise<KeyRecord[]> {
    return [...this.accounts.values()].map((a) => ({ ...a.record }));
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const acc = this.accounts.get(keyId);
    if (!acc) return false;
    acc.record.revokedAt ??= this.seconds();
    return true;
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const acc = this.accounts.get(r.keyId);
    if (!acc) return { kind: 'invalid_key', reason: 'not_found' };
    const { record } = acc;
    if (record.revokedAt !== null) return { kind: 'invalid_key', reason: 'revoked' };
    if (record.expiresAt !== null && record.expiresAt <= this.seconds()) return { kind: 'invalid_key', reason: 'expired' };
    if (record.models !== null && !record.models.includes(r.model)) return { kind: 'model_not_allowed' };
    this.purge(acc);
    // A request that reserves again (with a better prompt count) replaces what it holds.
    const available = this.available(acc) + (acc.reservations.get(r.requestId)?.amount ?? 0);
    this.dropReservation(acc, r.requestId);
    if (available < r.fixed + r.unit) return { kind: 'insufficient_quota', available };
    const per = Math.min(r.allowance, Math.floor((available - r.fixed) / r.unit));
    const amount = Math.ceil(r.fixed + per * r.unit);
    acc.reservations.set(r.requestId, { amount, deadline: this.now() + r.leaseMs });
    acc.reserved += amount;
    return { kind: 'reserved', allowance: per, amount };
  }

  async renew(keyId: string, requestId: string, leaseMs: number): Promise<boolean> {
    const held = this.accounts.get(keyId)?.reservations.get(requestId);
    if (!held) return false;
    held.deadline = this.now() + leaseMs;
    return true;
  }

  async release(keyId: string, requestId: string): Promise<void> {
    const acc = this.accounts.get(keyId);
    if (acc) this.dropReservation(acc, requestId);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const acc = this.accounts.get(s.keyId);
    if (!acc) throw new Error(`settle for unknown key ${s.keyId}`);
    const nowMs = this.now();
    const markerExpiry = acc.settled.get(s.requestId);
    if (markerExpiry !== undefined && markerExpiry > nowMs) return 'duplicate';
    this.purge(acc);
    this.dropReservation(acc, s.requestId);
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
    acc.ledger.push({
      requestId: s.requestId,
      keyId: s.keyId,
      model: s.model,
      promptTokens: s.promptTokens,
      completionTokens: s.completionTokens,
      chargedTokens: s.chargedTokens,
      estimated: s.estimated,
      stream: s.stream,
      status: s.status,
      created: now,
      cursor: this.nextCursor(nowMs),
    });
    acc.totals.requests += 1;
    acc.totals.promptTokens += s.promptTokens;
    acc.totals.completionTokens += s.completionTokens;
    acc.totals.chargedTokens += s.chargedTokens;
    // Trimmed in batches, so a full ledger costs one array shift per eighth of its size, not one per request.
    if (acc.ledger.length >= this.ledgerLimit + Math.max(1, this.ledgerLimit >> 3))
      acc.ledger.splice(0, acc.ledger.length - this.ledgerLimit);
    acc.settled.set(s.requestId, nowMs + this.dedupMs);
    return 'settled';
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    const accounts = q.keyId ? [this.accounts.get(q.keyId)].filter((a): a is Account => !!a) : [...this.accounts.values()];
    const out = accounts
      .flatMap((a) => a.ledger)
      .filter(
        (r) =>
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

  private dropReservation(acc: Account, requestId: string): void {
    const held = acc.reservations.get(requestId);
    if (!held) return;
    acc.reservations.delete(requestId);
    acc.reserved -= held.amount;
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
