/**
 * The memory store's accounts and keys, and its metering path over them: reserve, renew, release and settle, each one
 * synchronous step (so atomic in Node's event loop), with the key and account rate-limit windows they hold. A part of
 * MemoryStore (memory-store.ts), over its shared state (memory-state.ts).
 */
import { periodEnd } from '../../limits/budget';
import { admitAll, LimitWindow, type HeldLevel } from '../../limits/limit-window';
import type { MeteringStore } from '../ports/metering-store';
import type { ReserveRequest, ReserveResult, Settlement, SettleResult } from '../records/metering';
import { budgetViews, chargeBudgets, holdBudgets, type BudgetView } from './memory-budgets';
import { LedgerCursors } from './memory-ledger';
import { rollUp } from './memory-rollups';
import type { MemoryState } from './memory-state';
import { checkBudget, checkLowBalance, emitEvent } from './memory-outbox';
import { addUsage, capLeft, type Account, type Key, type Reservation } from './memory-records';
import { usageSettledData } from '../records/events';

export interface MemoryStoreOptions {
  /** The clock, in ms: leases, expiry, and the budgets' periods. Default Date.now. */
  now?: () => number;
  /** Usage records kept per account; older ones are dropped (totals and balances stay exact). Default 10000. */
  ledgerLimit?: number;
  /**
   * How long a settled request is remembered to refuse a duplicate (at least this, at most twice: markers are kept in
   * buckets of this width, memory-rollups.ts). A settle into memory cannot fail, so nothing is ever retried late: ten
   * minutes, not Redis's day, keeps the heap from growing with traffic. Default 600 s.
   */
  settleDedupSeconds?: number;
  /** Length of the rpm and tpm windows. Default 60 s. */
  limitWindowMs?: number;
}

export class MemoryMetering implements MeteringStore {
  readonly kind = 'memory' as const;
  private readonly cursors = new LedgerCursors();

  constructor(
    private readonly state: MemoryState,
    private readonly ledgerLimit: number,
  ) {}

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const acc = this.state.accounts.get(r.accountId);
    const key = r.keyId === null ? undefined : this.state.keys.get(r.keyId);
    if (r.keyId !== null) {
      if (!key || key.record.accountId !== r.accountId) return { kind: 'invalid_key', reason: 'not_found' };
      if (key.record.revokedAt !== null) return { kind: 'invalid_key', reason: 'revoked' };
      if (key.record.expiresAt !== null && key.record.expiresAt <= this.state.seconds()) return { kind: 'invalid_key', reason: 'expired' };
    }
    if (!acc) return { kind: 'account_not_found' };
    if (acc.record.status !== 'active') return { kind: 'account_disabled' };
    if (key && key.record.models !== null && !key.record.models.includes(r.model)) return { kind: 'model_not_allowed' };
    this.state.purge(acc);
    // A request that reserves again (with a better prompt count) replaces what it holds, or drops it when refused.
    const prior = this.state.dropReservation(acc, r.requestId);
    const levels = this.levels(acc, key);
    const now = this.state.now();
    const refused = (result: ReserveResult): ReserveResult => {
      if (prior && levels) for (const l of levels) l.window.end(r.requestId, { kind: 'undo' }, now);
      return result;
    };
    const accountLeft = this.state.available(acc);
    const keyLeft = key ? capLeft(key) : Infinity;
    const available = Math.min(accountLeft, keyLeft);
    if (available < r.fixed + r.unit) {
      return refused({ kind: 'insufficient_quota', available, limitedBy: keyLeft < accountLeft ? 'key' : 'account' });
    }
    // Budgets count like the balance: the allowance is lowered to what the tightest leaves, refused below one token.
    const budgets = budgetViews(key, acc, now);
    let budgetLeft = Infinity;
    for (const b of budgets ?? []) {
      const left = b.budget.tokens - b.used;
      if (left < budgetLeft) budgetLeft = left;
      if (left < r.fixed + r.unit) {
        if (this.state.wants.types.has('budget.exceeded')) checkBudget(acc, b, r.keyId, this.state.wants.types, true);
        const requested = Math.ceil(r.fixed + r.unit);
        const resetsAt = periodEnd(b.budget.period, b.start);
        return refused({
          kind: 'budget_exceeded',
          refusal: { level: b.level, budget: { ...b.budget }, used: b.used, requested, resetsAt },
        });
      }
    }
    // No output (embeddings: unit 0): the reservation is the prompt's alone.
    let per = r.unit > 0 ? Math.min(r.allowance, Math.floor((Math.min(available, budgetLeft) - r.fixed) / r.unit)) : 0;
    // A default allowance (no max_tokens) is lowered to what each tpm could ever admit, as the balance lowers it.
    if (levels && r.defaultAllowance && r.unit > 0) {
      for (const l of levels)
        if (l.limits.tpm !== undefined) per = Math.max(1, Math.min(per, Math.floor((l.limits.tpm - r.fixed) / r.unit)));
    }
    const amount = Math.ceil(r.fixed + per * r.unit);
    const admitted = levels && admitAll(levels, { tokens: amount, requestId: r.requestId, leaseMs: r.leaseMs }, now);
    if (admitted?.kind === 'rate_limited') return refused(admitted);
    const held: Reservation = { amount, keyId: r.keyId, deadline: now + r.leaseMs };
    if (budgets) held.budgets = holdBudgets(budgets, amount);
    acc.reservations.set(r.requestId, held);
    acc.reserved += amount;
    if (key) key.reserved += amount;
    return admitted ? { kind: 'reserved', allowance: per, amount, limitUse: admitted.uses } : { kind: 'reserved', allowance: per, amount };
  }

  async renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean> {
    const acc = this.state.accounts.get(accountId);
    const held = acc?.reservations.get(requestId);
    if (!acc || !held) return false;
    const now = this.state.now();
    held.deadline = now + leaseMs;
    for (const l of this.levels(acc, this.state.keyOf(held.keyId)) ?? []) l.window.renew(requestId, leaseMs, now);
    return true;
  }

  async release(accountId: string, requestId: string): Promise<void> {
    const acc = this.state.accounts.get(accountId);
    const held = acc?.reservations.get(requestId);
    if (!acc || !held) return;
    for (const l of this.levels(acc, this.state.keyOf(held.keyId)) ?? []) l.window.end(requestId, { kind: 'release' }, this.state.now());
    this.state.dropReservation(acc, requestId);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const acc = this.state.accounts.get(s.accountId);
    if (!acc) throw new Error(`settle for unknown account ${s.accountId}`);
    const nowMs = this.state.now();
    if (acc.settled.has(s.requestId, nowMs)) return { kind: 'duplicate' };
    this.state.purge(acc);
    const held = this.state.dropReservation(acc, s.requestId);
    const key = this.state.keyOf(s.keyId);
    for (const l of this.levels(acc, key) ?? []) l.window.end(s.requestId, { kind: 'settle', tokens: s.chargedTokens }, nowMs);
    const budgets = budgetViews(key, acc, nowMs);
    if (budgets) chargeBudgets(budgets, held?.budgets, s.chargedTokens);
    let left = s.chargedTokens;
    const now = this.state.seconds();
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
    const { toolCalls, toolTokens, ...rest } = s;
    acc.ledger.push({
      ...rest,
      // The hosted tool line, as Redis writes it: only when not 0.
      ...(toolCalls ? { toolCalls, toolTokens: toolTokens ?? 0 } : {}),
      endpoint: s.endpoint ?? 'chat',
      cachedTokens: s.cachedTokens ?? 0,
      reasoningTokens: s.reasoningTokens ?? 0,
      created: now,
      cursor: this.cursors.next(nowMs),
    });
    addUsage(acc.totals, s);
    if (key) {
      addUsage(key.usage, s);
      key.record.spentTokens += s.chargedTokens;
      key.record.lastUsed = now;
    }
    // Trimmed in batches, so a full ledger costs one array shift per eighth of its size, not one per request.
    if (acc.ledger.length >= this.ledgerLimit + Math.max(1, this.ledgerLimit >> 3))
      acc.ledger.splice(0, acc.ledger.length - this.ledgerLimit);
    acc.settled.add(s.requestId, nowMs);
    rollUp(acc.rollups, s, now);
    if (this.state.wants.types.size > 0) this.settledEvents(acc, s, budgets);
    return { kind: 'settled', balance: this.state.available(acc) };
  }

  async ping(): Promise<void> {}

  /** usage.settled, balance.low and the budgets' events, when wanted, in the settlement's step. */
  private settledEvents(acc: Account, s: Settlement, budgets: BudgetView[] | undefined): void {
    const wanted = this.state.wants.types;
    if (wanted.has('usage.settled')) emitEvent(acc, 'usage.settled', usageSettledData(s), s.requestId);
    if (wanted.has('balance.low')) checkLowBalance(acc, this.state.available(acc) + acc.reserved, this.state.wants.lowBalance);
    if (wanted.has('budget.threshold') || wanted.has('budget.exceeded'))
      for (const b of budgets ?? []) checkBudget(acc, b, s.keyId, wanted, false);
  }

  /** The key's and the account's levels that have limits (key first); undefined when neither has any. */
  private levels(acc: Account, key: Key | undefined): HeldLevel[] | undefined {
    let out: HeldLevel[] | undefined;
    if (key?.record.limits)
      (out ??= []).push({ level: 'key', limits: key.record.limits, window: (key.window ??= new LimitWindow(this.state.windowMs)) });
    if (acc.record.limits)
      (out ??= []).push({ level: 'account', limits: acc.record.limits, window: (acc.window ??= new LimitWindow(this.state.windowMs)) });
    return out;
  }
}
