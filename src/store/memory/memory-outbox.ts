/** The memory store's event outbox: each account's events, written in the same synchronous step as their cause. */
import { newId } from '../ids';
import { periodEnd } from '../../limits/budget';
import {
  BUDGET_THRESHOLD,
  budgetEventData,
  lowBalanceData,
  lowBalanceThreshold,
  packageExpiryData,
  type EventType,
  type LowBalanceDefault,
  type OutboxEvent,
} from '../records/events';
import type { BudgetView } from './memory-budgets';
import type { Account, AccountEvents } from './memory-records';

/** Cursors in the stream-id form (`0-n`), so they order like Redis's across accounts. */
let seq = 0;

export function eventsOf(acc: Account): AccountEvents {
  return (acc.events ??= { outbox: [], lowAt: null, low: false, expiry: new Map() });
}

/** Appends an event to the account's outbox. */
export function emitEvent(acc: Account, type: EventType, data: string, id: string = newId('evt')): void {
  eventsOf(acc).outbox.push({ id, type, accountId: acc.record.id, created: Math.floor(Date.now() / 1000), data, cursor: `0-${++seq}` });
}

/**
 * balance.low: written once per crossing below the account's threshold (lowBalanceThreshold), armed again once the
 * balance is back at or above it. `balance`: live packages less debt. A grant (`credit`) only arms it again, never
 * writes it: a credit is not the balance running low.
 */
export function checkLowBalance(acc: Account, balance: number, defaults: LowBalanceDefault, credit = false): void {
  const state = eventsOf(acc);
  const threshold = lowBalanceThreshold(state.lowAt, acc.lastGrant, defaults);
  if (threshold !== null && balance < threshold) {
    if (state.low || credit) return;
    state.low = true;
    emitEvent(acc, 'balance.low', lowBalanceData(acc.record.id, balance, threshold));
  } else state.low = false;
}

/**
 * budget.threshold (the period's charged tokens reached 80 % of the budget) and budget.exceeded (they reached all of
 * it, or the budget refused a request: `refused`), each written once per period per level: the level keeps the period
 * start each was last written for, so the next period arms both again. `keyId`: the request's key.
 */
export function checkBudget(acc: Account, v: BudgetView, keyId: string | null, wanted: ReadonlySet<EventType>, refused: boolean): void {
  const c = v.owner.counters;
  const spent = c !== undefined && c.start === v.start ? c.spent : 0;
  const notified = (v.owner.notified ??= {});
  const { tokens, period } = v.budget;
  const data = () =>
    budgetEventData({
      accountId: acc.record.id,
      keyId: v.level === 'key' ? keyId : null,
      level: v.level,
      tokens,
      period,
      spent,
      periodStart: v.start,
      resetsAt: periodEnd(period, v.start),
    });
  const reached = spent * BUDGET_THRESHOLD.denominator >= tokens * BUDGET_THRESHOLD.numerator;
  if (!refused && reached && wanted.has('budget.threshold') && notified.threshold !== v.start) {
    notified.threshold = v.start;
    emitEvent(acc, 'budget.threshold', data());
  }
  if ((refused || spent >= tokens) && wanted.has('budget.exceeded') && notified.exceeded !== v.start) {
    notified.exceeded = v.start;
    emitEvent(acc, 'budget.exceeded', data());
  }
}

/**
 * package.expiring (a package with tokens left expires within `warnSeconds` of `nowS`) and package.expired, each
 * written once per package: the account keeps the last one written for each package.
 */
export function checkPackageExpiry(acc: Account, nowS: number, warnSeconds: number, wanted: ReadonlySet<EventType>): void {
  const expiry = eventsOf(acc).expiry;
  for (const p of acc.packages) {
    if (p.expiresAt === null || p.expiresAt - warnSeconds > nowS) continue;
    const done = expiry.get(p.id);
    const type = p.expiresAt <= nowS ? 'package.expired' : 'package.expiring';
    if (done === 'expired' || (type === 'package.expiring' && (done !== undefined || p.remaining === 0)) || !wanted.has(type)) continue;
    expiry.set(p.id, type === 'package.expired' ? 'expired' : 'expiring');
    emitEvent(acc, type, packageExpiryData(acc.record.id, { ...p, expiresAt: p.expiresAt }));
  }
}

export function readOutbox(acc: Account | undefined, limit: number): OutboxEvent[] {
  return (acc?.events?.outbox ?? []).slice(0, limit).map((e) => ({ ...e }));
}

export function dropFromOutbox(acc: Account | undefined, cursors: readonly string[]): void {
  if (!acc?.events) return;
  const gone = new Set(cursors);
  acc.events.outbox = acc.events.outbox.filter((e) => !gone.has(e.cursor));
}
