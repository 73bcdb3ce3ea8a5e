/** Daily totals kept beside the ledger by the settle step: per account, UTC day, and model or key. */
import type { UsageTotals } from './common';

/** How many days a day's rollup is kept: a year's charts and a month's slack (both stores). */
export const ROLLUP_DAYS = 400;

/** One UTC day's totals of one model (`by: 'model'`) or one key (`by: 'key'`). */
export interface DailyRow extends UsageTotals {
  /** The UTC day: unix seconds / 86400, rounded down. */
  day: number;
  by: 'model' | 'key';
  /** The model's id, or the key's. */
  name: string;
}

export interface DailyQuery {
  /** One account's days; every account's, summed, when undefined. */
  accountId?: string;
  /** The first and last UTC day (unix seconds / 86400), both included. */
  sinceDay: number;
  untilDay: number;
}

export interface DailyUsage {
  /** Days without requests have no rows. */
  rows: DailyRow[];
  /**
   * The first day the rows hold whole: days before it (records settled before the store kept rollups) are only in the
   * ledger. At most sinceDay when the rows cover the whole query.
   */
  from: number;
}

export const DAY_SECONDS = 86_400;

/** Adds `add`'s sums into `into`. */
export function addTotals(into: UsageTotals, add: UsageTotals): void {
  into.requests += add.requests;
  into.promptTokens += add.promptTokens;
  into.completionTokens += add.completionTokens;
  into.cachedTokens += add.cachedTokens;
  into.reasoningTokens += add.reasoningTokens;
  into.chargedTokens += add.chargedTokens;
}

/** Rows by day, models before keys, then by name: the order both stores answer in. */
export function sortRows(rows: DailyRow[]): DailyRow[] {
  return rows.sort(
    (a, b) => a.day - b.day || (a.by === b.by ? 0 : a.by === 'model' ? -1 : 1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
}
