/** The memory store's internal records of accounts and keys, and the pure helpers that read and update them. */
import { budgetStatus } from '../../limits/budget';
import type { LimitWindow } from '../../limits/limit-window';
import type { AccountRecord } from '../records/account';
import type { KeyRecord } from '../records/key';
import type { OutboxEvent } from '../records/events';
import type { Budgeted, BudgetHolds } from './memory-budgets';
import type { Rollups, SettledMarks } from './memory-rollups';
import type { Settlement, UsageRecord } from '../records/metering';
import type { TokenPackage, UsageTotals } from '../records/common';

/** A reservation: its amount, the key it was reserved on, its lease deadline (ms), and what it holds of budgets. */
export interface Reservation {
  amount: number;
  keyId: string | null;
  deadline: number;
  budgets?: BudgetHolds;
}

/** An account: its record (the budget kept apart, in `budget` and `counters`) and its money. */
export interface Account extends Budgeted {
  record: Omit<AccountRecord, 'budget'>;
  packages: TokenPackage[];
  /** request id -> its reservation */
  reservations: Map<string, Reservation>;
  reserved: number;
  debt: number;
  /** The tokens of its most recent grant (the trial's included), balance.low's default measure; null: never granted. */
  lastGrant: number | null;
  ledger: UsageRecord[];
  totals: UsageTotals;
  /** The requests settled within the dedup window (memory-rollups.ts). */
  settled: SettledMarks;
  /** Daily totals per model and key (memory-rollups.ts). */
  rollups: Rollups;
  /** grant idempotency id -> the package it credited */
  grants: Map<string, string>;
  keys: string[];
  /** The account's rate-limit window, made when it first has limits. */
  window?: LimitWindow;
  /** Its event outbox and balance.low state (memory-outbox.ts), made when first used. */
  events?: AccountEvents;
}

export interface AccountEvents {
  /** Events waiting to be handed to the webhooks' queues. */
  outbox: OutboxEvent[];
  /** The account's own balance.low threshold; null: the default. */
  lowAt: number | null;
  /** Below the threshold, and notified. */
  low: boolean;
  /** Package id -> the last of its expiry events written: 'expiring' or 'expired' (memory-outbox.ts). */
  expiry: Map<string, 'expiring' | 'expired'>;
}

export interface Key extends Budgeted {
  /** The key's record, its budget kept apart (in `budget` and `counters`). */
  record: Omit<KeyRecord, 'budget'>;
  /** Reserved by this key's requests in flight. */
  reserved: number;
  usage: UsageTotals;
  /** The key's rate-limit window, made when it first has limits. */
  window?: LimitWindow;
}

export const zeroTotals = (): UsageTotals => ({
  requests: 0,
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  reasoningTokens: 0,
  chargedTokens: 0,
});

/** What a key's cap still allows: cap − spent − reserved; unlimited without a cap. */
export function capLeft(key: Key): number {
  const cap = key.record.limitTokens;
  return cap === null ? Infinity : cap - key.record.spentTokens - key.reserved;
}

/** The key's record as the store hands it out, its budget's use at `ms`. */
export function copyKey(key: Key, ms: number): KeyRecord {
  const { record } = key;
  return { ...record, models: record.models ? [...record.models] : null, budget: key.budget && budgetStatus(key.budget, key.counters, ms) };
}

/** The account's record as the store hands it out, its budget's use at `ms`. */
export function copyAccount(acc: Account, ms: number): AccountRecord {
  return { ...acc.record, budget: acc.budget && budgetStatus(acc.budget, acc.counters, ms) };
}

export function addUsage(totals: UsageTotals, s: Settlement): void {
  totals.requests += 1;
  totals.promptTokens += s.promptTokens;
  totals.completionTokens += s.completionTokens;
  totals.cachedTokens += s.cachedTokens ?? 0;
  totals.reasoningTokens += s.reasoningTokens ?? 0;
  totals.chargedTokens += s.chargedTokens;
}
