/** The memory store's daily rollups (per account, UTC day, and model or key) and its settled markers, kept by settle. */
import { addTotals, DAY_SECONDS, ROLLUP_DAYS, sortRows, type DailyQuery, type DailyRow, type DailyUsage } from '../records/rollups';
import type { Settlement } from '../records/metering';
import type { UsageTotals } from '../records/common';

/** An account's rollups: day -> `m:<model>` | `k:<key id>` -> totals. */
export type Rollups = Map<number, Map<string, UsageTotals>>;

/** Adds a settlement to its day's rollup, per model and per key; drops days past the keeping. */
export function rollUp(rollups: Rollups, s: Settlement, nowS: number): void {
  const day = Math.floor(nowS / DAY_SECONDS);
  let today = rollups.get(day);
  if (!today) {
    rollups.set(day, (today = new Map()));
    for (const old of rollups.keys()) if (old < day - ROLLUP_DAYS) rollups.delete(old);
  }
  const add: UsageTotals = {
    requests: 1,
    promptTokens: s.promptTokens,
    completionTokens: s.completionTokens,
    cachedTokens: s.cachedTokens ?? 0,
    reasoningTokens: s.reasoningTokens ?? 0,
    chargedTokens: s.chargedTokens,
  };
  for (const field of s.keyId === null ? [`m:${s.model}`] : [`m:${s.model}`, `k:${s.keyId}`]) {
    const totals = today.get(field);
    if (totals) addTotals(totals, add);
    else today.set(field, { ...add });
  }
}

/** The query's rows, summed over these accounts' rollups, by day then model or key. */
export function readRollups(all: readonly Rollups[], q: DailyQuery): DailyUsage {
  const rows = new Map<string, DailyRow>();
  for (const rollups of all)
    for (const [day, fields] of rollups) {
      if (day < q.sinceDay || day > q.untilDay) continue;
      for (const [field, totals] of fields) {
        const id = `${day}\n${field}`;
        const row = rows.get(id);
        if (row) addTotals(row, totals);
        else rows.set(id, { day, by: field.startsWith('m:') ? 'model' : 'key', name: field.slice(2), ...totals });
      }
    }
  return { rows: sortRows([...rows.values()]), from: q.sinceDay };
}

/**
 * Settled markers in buckets of `width` ms (the dedup window, at most an hour), each dropped whole once the window
 * past its end is over: a marker lives at least the window and at most the window plus a bucket, and a retry looks
 * in every bucket that can still hold a marker set within the window (so one landing in the next bucket is refused).
 */
export class SettledMarks {
  private readonly buckets = new Map<number, Set<string>>();

  constructor(
    private readonly windowMs: number,
    private readonly width = Math.min(windowMs, 3_600_000),
  ) {}

  has(requestId: string, nowMs: number): boolean {
    for (let b = Math.floor(nowMs / this.width); b >= Math.floor((nowMs - this.windowMs) / this.width); b--)
      if (this.buckets.get(b)?.has(requestId)) return true;
    return false;
  }

  add(requestId: string, nowMs: number): void {
    const b = Math.floor(nowMs / this.width);
    let set = this.buckets.get(b);
    if (!set) {
      this.buckets.set(b, (set = new Set()));
      for (const old of this.buckets.keys()) if ((old + 1) * this.width + this.windowMs <= nowMs) this.buckets.delete(old);
    }
    set.add(requestId);
  }
}
