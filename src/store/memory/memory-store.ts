/**
 * The zero-setup store for a single process (nothing survives a restart; it keeps the last `ledgerLimit` usage
 * records per account). Each method's check-and-change runs synchronously, so it is atomic in Node's event loop, with
 * the same semantics as the Redis scripts (the ports' contract tests keep them equal).
 *
 * One class, written in layers that share its state, one port each: model limits (memory-model-limits.ts), metering
 * over the accounts and keys (memory-metering.ts), keys (memory-keys.ts), and here accounts and the usage ledger.
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
import { accountData, packageGrantedData, type EventWants, type OutboxEvent } from '../records/events';
import { readLedgers } from './memory-ledger';
import { readRollups } from './memory-rollups';
import type { DailyQuery, DailyUsage } from '../records/rollups';
import { checkLowBalance, checkPackageExpiry, dropFromOutbox, emitEvent, eventsOf, readOutbox } from './memory-outbox';
import { MemoryKeys } from './memory-keys';
import { copyAccount, zeroTotals, type Account } from './memory-records';

export class MemoryStore extends MemoryKeys implements Store {
  readonly kind = 'memory' as const;
  private readonly byEmail = new Map<string, string>();

  async createAccount(input: NewAccount): Promise<CreateAccountResult> {
    if (input.email !== null && this.byEmail.has(input.email)) return { kind: 'email_taken' };
    const { budget = null, trial = null, ...fields } = input;
    const record: Account['record'] = { id: newId('acc'), ...fields, created: this.seconds(), limits: input.limits ?? null };
    const acc: Account = {
      record,
      budget,
      packages: [],
      reservations: new Map(),
      reserved: 0,
      debt: 0,
      ledger: [],
      totals: zeroTotals(),
      settled: this.settledMarks(),
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
    this.accounts.set(record.id, acc);
    if (input.email !== null) this.byEmail.set(input.email, record.id);
    const account = copyAccount(acc, this.now());
    if (this.wants.types.has('account.created')) emitEvent(acc, 'account.created', accountData(account));
    if (pkg && this.wants.types.has('package.granted')) emitEvent(acc, 'package.granted', packageGrantedData(record.id, pkg, TRIAL_GRANT));
    return { kind: 'created', account };
  }

  async getAccount(accountId: string): Promise<AccountState | undefined> {
    const acc = this.accounts.get(accountId);
    if (!acc) return undefined;
    this.purge(acc);
    return {
      ...copyAccount(acc, this.now()),
      balance: this.available(acc),
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
    return acc ? copyAccount(acc, this.now()) : undefined;
  }

  async listAccounts(q: AccountQuery): Promise<AccountRecord[]> {
    const search = q.search?.toLowerCase();
    const out: AccountRecord[] = [];
    for (const id of [...this.accounts.keys()].sort()) {
      if (q.after !== undefined && id <= q.after) continue;
      const acc = this.accounts.get(id) as Account;
      if (search !== undefined && !matchesSearch(acc.record, search)) continue;
      out.push(copyAccount(acc, this.now()));
      if (out.length >= q.limit) break;
    }
    return out;
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | undefined> {
    const acc = this.accounts.get(accountId);
    if (!acc) return undefined;
    if (patch.name !== undefined) acc.record.name = patch.name;
    if (patch.status !== undefined) {
      if (patch.status === 'disabled' && acc.record.status === 'active' && this.wants.types.has('account.disabled'))
        emitEvent(acc, 'account.disabled', JSON.stringify({ account_id: accountId }));
      acc.record.status = patch.status;
    }
    if (patch.role !== undefined) acc.record.role = patch.role;
    if (patch.passwordHash !== undefined) acc.record.passwordHash = patch.passwordHash;
    if (patch.limits !== undefined) acc.record.limits = patch.limits;
    if (patch.budget !== undefined) acc.budget = patch.budget;
    return copyAccount(acc, this.now());
  }

  private trialPackage(trial: NewTrial, created: number): TokenPackage {
    const expiresAt = trial.validDays === null ? null : created + trial.validDays * 86_400;
    return { id: newId('pkg'), tokens: trial.tokens, remaining: trial.tokens, expiresAt, created };
  }

  async grantPackage(accountId: string, input: NewPackage, options: GrantOptions = {}): Promise<GrantResult> {
    if (!isGrantable(input.tokens)) return { kind: 'invalid_tokens' };
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
    if (this.unspent(acc) + input.tokens - paid > MAX_UNSPENT_TOKENS) return { kind: 'balance_limit' };
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
    if (this.wants.types.has('package.granted')) emitEvent(acc, 'package.granted', packageGrantedData(accountId, pkg, options.once));
    if (this.wants.types.has('balance.low')) checkLowBalance(acc, this.available(acc) + acc.reserved, this.wants.lowBalanceTokens);
    return { kind: 'granted', package: { ...pkg } };
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    const accountId = q.accountId ?? (q.keyId !== undefined ? this.keys.get(q.keyId)?.record.accountId : undefined);
    const scoped = q.accountId !== undefined || q.keyId !== undefined;
    const accounts = scoped ? [this.accounts.get(accountId ?? '')].filter((a): a is Account => !!a) : [...this.accounts.values()];
    return readLedgers(accounts, q);
  }

  async daily(q: DailyQuery): Promise<DailyUsage> {
    const accounts = q.accountId !== undefined ? [this.accounts.get(q.accountId)] : [...this.accounts.values()];
    return readRollups(
      accounts.filter((a): a is Account => !!a).map((a) => a.rollups),
      q,
    );
  }

  wantEvents(wants: EventWants): void {
    this.wants = wants;
  }

  async eventAccounts(sweep: boolean): Promise<string[]> {
    const all = [...this.accounts.entries()];
    return (sweep ? all : all.filter(([, acc]) => (acc.events?.outbox.length ?? 0) > 0)).map(([id]) => id);
  }

  async packageEvents(accountId: string, warnSeconds: number): Promise<void> {
    const acc = this.accounts.get(accountId);
    if (acc && (this.wants.types.has('package.expiring') || this.wants.types.has('package.expired')))
      checkPackageExpiry(acc, this.seconds(), warnSeconds, this.wants.types);
  }

  async readEvents(accountId: string, limit: number): Promise<OutboxEvent[]> {
    return readOutbox(this.accounts.get(accountId), limit);
  }

  async dropEvents(accountId: string, cursors: readonly string[]): Promise<void> {
    dropFromOutbox(this.accounts.get(accountId), cursors);
  }

  async setLowBalance(accountId: string, tokens: number | null): Promise<boolean> {
    const acc = this.accounts.get(accountId);
    if (!acc) return false;
    eventsOf(acc).lowAt = tokens;
    return true;
  }

  async close(): Promise<void> {}
}
