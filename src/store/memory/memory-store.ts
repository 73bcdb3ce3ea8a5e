/**
 * The zero-setup store for a single process (nothing survives a restart; it keeps the last `ledgerLimit` usage
 * records per account). Each method's check-and-change runs synchronously, so it is atomic in Node's event loop, with
 * the same semantics as the Redis scripts (the ports' contract tests keep them equal).
 *
 * One store composed of its parts, which share its state (memory-state.ts), one port each: metering
 * (memory-metering.ts), keys (memory-keys.ts), model limits (memory-model-limits.ts), and here accounts, the usage
 * ledger and the event outbox.
 */
import { LimitWindow } from '../../limits/limit-window';
import type { Store } from '../ports/store';
import { matchesSearch, newId } from '../ids';
import {
  isGrantable,
  MAX_UNSPENT_TOKENS,
  type AccountPatch,
  type AccountQuery,
  type AccountRecord,
  type AccountState,
  type CreateAccountResult,
  type GrantOptions,
  type GrantResult,
  type NewAccount,
  type NewPackage,
  type NewTrial,
  TRIAL_GRANT,
} from '../records/account';
import type { TokenPackage } from '../records/common';
import type { UsageQuery, UsageRecord } from '../records/metering';
import { accountData, accountDisabledData, packageGrantedData, type EventWants, type OutboxEvent } from '../records/events';
import { readLedgers } from './memory-ledger';
import { readRollups } from './memory-rollups';
import type { DailyQuery, DailyUsage } from '../records/rollups';
import { checkLowBalance, checkPackageExpiry, dropFromOutbox, emitEvent, eventsOf, readOutbox } from './memory-outbox';
import { MemoryKeys } from './memory-keys';
import { MemoryMetering, type MemoryStoreOptions } from './memory-metering';
import { MemoryModelLimits } from './memory-model-limits';
import { MemoryState } from './memory-state';
import { DEFAULT_WINDOW_MS } from '../../limits/limits';
import { copyAccount, zeroTotals, type Account } from './memory-records';

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  private readonly byEmail = new Map<string, string>();
  private readonly state: MemoryState;
  private readonly metering: MemoryMetering;
  private readonly keys: MemoryKeys;
  private readonly limits: MemoryModelLimits;

  constructor(options: MemoryStoreOptions = {}) {
    const now = options.now ?? Date.now;
    const windowMs = options.limitWindowMs ?? DEFAULT_WINDOW_MS;
    this.state = new MemoryState(now, windowMs, (options.settleDedupSeconds ?? 600) * 1000);
    this.metering = new MemoryMetering(this.state, options.ledgerLimit ?? 10_000);
    this.keys = new MemoryKeys(this.state);
    this.limits = new MemoryModelLimits({ now, limitWindowMs: windowMs });
  }

  // The ports, each answered by its part.
  reserve: Store['reserve'] = (r) => this.metering.reserve(r);
  renew: Store['renew'] = (accountId, requestId, leaseMs) => this.metering.renew(accountId, requestId, leaseMs);
  release: Store['release'] = (accountId, requestId) => this.metering.release(accountId, requestId);
  settle: Store['settle'] = (s) => this.metering.settle(s);
  ping: Store['ping'] = () => this.metering.ping();
  findKeyId: Store['findKeyId'] = (hash) => this.keys.findKeyId(hash);
  getKey: Store['getKey'] = (keyId) => this.keys.getKey(keyId);
  createKey: Store['createKey'] = (accountId, input) => this.keys.createKey(accountId, input);
  listKeys: Store['listKeys'] = (accountId) => this.keys.listKeys(accountId);
  updateKey: Store['updateKey'] = (keyId, patch) => this.keys.updateKey(keyId, patch);
  revokeKey: Store['revokeKey'] = (keyId) => this.keys.revokeKey(keyId);
  admitModel: Store['admitModel'] = (model, check) => this.limits.admitModel(model, check);
  endModel: Store['endModel'] = (model, requestId, how) => this.limits.endModel(model, requestId, how);
  renewModel: Store['renewModel'] = (model, requestId, leaseMs) => this.limits.renewModel(model, requestId, leaseMs);
  modelUse: Store['modelUse'] = (model, limits) => this.limits.modelUse(model, limits);

  async createAccount(input: NewAccount): Promise<CreateAccountResult> {
    if (input.email !== null && this.byEmail.has(input.email)) return { kind: 'email_taken' };
    const { budget = null, trial = null, ...fields } = input;
    const record: Account['record'] = { id: newId('acc'), ...fields, created: this.state.seconds(), limits: input.limits ?? null };
    const acc: Account = {
      record,
      budget,
      packages: [],
      reservations: new Map(),
      reserved: 0,
      debt: 0,
      lastGrant: trial?.tokens ?? null,
      ledger: [],
      totals: zeroTotals(),
      settled: this.state.settledMarks(),
      rollups: new Map(),
      grants: new Map(),
      keys: [],
    };
    // The trial is part of the account from its first moment (one step with the email check above).
    const pkg = trial && this.trialPackage(trial, record.created);
    if (pkg) {
      acc.packages.push(pkg);
      acc.grants.set(TRIAL_GRANT, pkg.id);
    }
    this.state.accounts.set(record.id, acc);
    if (input.email !== null) this.byEmail.set(input.email, record.id);
    const account = copyAccount(acc, this.state.now());
    if (this.state.wants.types.has('account.created')) emitEvent(acc, 'account.created', accountData(account));
    if (pkg && this.state.wants.types.has('package.granted'))
      emitEvent(acc, 'package.granted', packageGrantedData(record.id, pkg, TRIAL_GRANT));
    return { kind: 'created', account };
  }

  async getAccount(accountId: string): Promise<AccountState | undefined> {
    const acc = this.state.accounts.get(accountId);
    if (!acc) return undefined;
    this.state.purge(acc);
    return {
      ...copyAccount(acc, this.state.now()),
      balance: this.state.available(acc),
      reserved: acc.reserved,
      debt: acc.debt,
      packages: acc.packages.map((p) => ({ ...p })),
      usage: { ...acc.totals },
      limitUse: acc.record.limits && (acc.window ?? new LimitWindow(this.state.windowMs)).use(acc.record.limits, this.state.now()),
    };
  }

  async getAccounts(accountIds: readonly string[]): Promise<(AccountState | undefined)[]> {
    return Promise.all(accountIds.map((id) => this.getAccount(id)));
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | undefined> {
    const id = this.byEmail.get(email);
    const acc = id === undefined ? undefined : this.state.accounts.get(id);
    return acc ? copyAccount(acc, this.state.now()) : undefined;
  }

  async listAccounts(q: AccountQuery): Promise<AccountRecord[]> {
    const search = q.search?.toLowerCase();
    const out: AccountRecord[] = [];
    for (const id of [...this.state.accounts.keys()].sort()) {
      if (q.after !== undefined && id <= q.after) continue;
      const acc = this.state.accounts.get(id) as Account;
      if (search !== undefined && !matchesSearch(acc.record, search)) continue;
      out.push(copyAccount(acc, this.state.now()));
      if (out.length >= q.limit) break;
    }
    return out;
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | undefined> {
    const acc = this.state.accounts.get(accountId);
    if (!acc) return undefined;
    if (patch.name !== undefined) acc.record.name = patch.name;
    if (patch.status !== undefined) {
      if (patch.status === 'disabled' && acc.record.status === 'active' && this.state.wants.types.has('account.disabled'))
        emitEvent(acc, 'account.disabled', accountDisabledData(accountId));
      acc.record.status = patch.status;
    }
    if (patch.role !== undefined) acc.record.role = patch.role;
    if (patch.passwordHash !== undefined) acc.record.passwordHash = patch.passwordHash;
    if (patch.limits !== undefined) acc.record.limits = patch.limits;
    if (patch.budget !== undefined) acc.budget = patch.budget;
    return copyAccount(acc, this.state.now());
  }

  private trialPackage(trial: NewTrial, created: number): TokenPackage {
    const expiresAt = trial.validDays === null ? null : created + trial.validDays * 86_400;
    return { id: newId('pkg'), tokens: trial.tokens, remaining: trial.tokens, expiresAt, created };
  }

  async grantPackage(accountId: string, input: NewPackage, options: GrantOptions = {}): Promise<GrantResult> {
    if (!isGrantable(input.tokens)) return { kind: 'invalid_tokens' };
    const acc = this.state.accounts.get(accountId);
    if (!acc) return { kind: 'account_not_found' };
    if (options.once !== undefined) {
      const earlier = acc.grants.get(options.once);
      if (earlier !== undefined) {
        const pkg = acc.packages.find((p) => p.id === earlier);
        return { kind: 'duplicate', package: pkg && { ...pkg } };
      }
    }
    const paid = Math.min(acc.debt, input.tokens);
    if (this.state.unspent(acc) + input.tokens - paid > MAX_UNSPENT_TOKENS) return { kind: 'balance_limit' };
    acc.debt -= paid;
    const pkg: TokenPackage = {
      id: newId('pkg'),
      tokens: input.tokens,
      remaining: input.tokens - paid,
      expiresAt: input.expiresAt,
      created: this.state.seconds(),
    };
    acc.packages.push(pkg);
    acc.lastGrant = pkg.tokens;
    if (options.once !== undefined) acc.grants.set(options.once, pkg.id);
    if (this.state.wants.types.has('package.granted')) emitEvent(acc, 'package.granted', packageGrantedData(accountId, pkg, options.once));
    if (this.state.wants.types.has('balance.low'))
      checkLowBalance(acc, this.state.available(acc) + acc.reserved, this.state.wants.lowBalance, true);
    return { kind: 'granted', package: { ...pkg } };
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    const accountId = q.accountId ?? (q.keyId !== undefined ? this.state.keys.get(q.keyId)?.record.accountId : undefined);
    const scoped = q.accountId !== undefined || q.keyId !== undefined;
    const accounts = scoped
      ? [this.state.accounts.get(accountId ?? '')].filter((a): a is Account => !!a)
      : [...this.state.accounts.values()];
    return readLedgers(accounts, q);
  }

  async daily(q: DailyQuery): Promise<DailyUsage> {
    const accounts = q.accountId !== undefined ? [this.state.accounts.get(q.accountId)] : [...this.state.accounts.values()];
    return readRollups(
      accounts.filter((a): a is Account => !!a).map((a) => a.rollups),
      q,
    );
  }

  wantEvents(wants: EventWants): void {
    this.state.wants = wants;
  }

  async eventAccounts(sweep: boolean): Promise<string[]> {
    const all = [...this.state.accounts.entries()];
    return (sweep ? all : all.filter(([, acc]) => (acc.events?.outbox.length ?? 0) > 0)).map(([id]) => id);
  }

  async packageEvents(accountId: string, warnSeconds: number): Promise<void> {
    const acc = this.state.accounts.get(accountId);
    if (acc && (this.state.wants.types.has('package.expiring') || this.state.wants.types.has('package.expired')))
      checkPackageExpiry(acc, this.state.seconds(), warnSeconds, this.state.wants.types);
  }

  async readEvents(accountId: string, limit: number): Promise<OutboxEvent[]> {
    return readOutbox(this.state.accounts.get(accountId), limit);
  }

  async dropEvents(accountId: string, cursors: readonly string[]): Promise<void> {
    dropFromOutbox(this.state.accounts.get(accountId), cursors);
  }

  async setLowBalance(accountId: string, tokens: number | null): Promise<boolean> {
    const acc = this.state.accounts.get(accountId);
    if (!acc) return false;
    eventsOf(acc).lowAt = tokens;
    return true;
  }

  async close(): Promise<void> {}
}
