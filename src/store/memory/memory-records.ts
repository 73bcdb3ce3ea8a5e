/** The memory store's internal records of accounts and keys, and the pure helpers that read and update them. */
import type { LimitWindow } from '../../limits/limit-window';
import type { AccountRecord } from '../records/account';
import type { KeyRecord } from '../records/key';
import type { OutboxEvent } from '../records/events';
import type { Settlement, UsageRecord } from '../records/metering';
import type { TokenPackage, UsageTotals } from '../records/common';

export interface Account {
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
}

export interface Key {
  record: KeyRecord;
  /** Reserved by this key's requests in flight. */
  reserved: number;
  usage: UsageTotals;
  /** The key's rate-limit window, made when it first has limits. */
  window?: LimitWindow;
}

export const zeroTotals = (): UsageTotals => ({ requests: 0, promptTokens: 0, completionTokens: 0, chargedTokens: 0 });

/** What a key's cap still allows: cap − spent − reserved; unlimited without a cap. */
export function capLeft(key: Key): number {
  const cap = key.record.limitTokens;
  return cap === null ? Infinity : cap - key.record.spentTokens - key.reserved;
}

export function copyKey(record: KeyRecord): KeyRecord {
  return { ...record, models: record.models ? [...record.models] : null };
}

export function addUsage(totals: UsageTotals, s: Settlement): void {
  totals.requests += 1;
  totals.promptTokens += s.promptTokens;
  totals.completionTokens += s.completionTokens;
  totals.chargedTokens += s.chargedTokens;
}
