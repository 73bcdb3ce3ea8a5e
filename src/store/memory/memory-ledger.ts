/** The memory store's usage ledger: cursors shaped like Redis stream ids, and reading records across accounts. */
import { compareCursor } from '../ids';
import type { Account } from './memory-records';
import type { UsageQuery, UsageRecord } from '../records/metering';

export class LedgerCursors {
  private lastCursorMs = 0;
  private cursorSeq = 0;

  /** Cursors shaped like Redis stream ids, so readers can treat both stores alike. */
  next(nowMs: number): string {
    if (nowMs > this.lastCursorMs) {
      this.lastCursorMs = nowMs;
      this.cursorSeq = 0;
    } else {
      this.cursorSeq += 1;
    }
    return `${this.lastCursorMs}-${this.cursorSeq}`;
  }
}

/** The query's records from these accounts' ledgers, oldest first (see UsageQuery for after, before and limit). */
export function readLedgers(accounts: readonly Account[], q: UsageQuery): UsageRecord[] {
  const out = accounts
    .flatMap((a) => a.ledger)
    .filter(
      (r) =>
        (q.keyId === undefined || r.keyId === q.keyId) &&
        (q.model === undefined || r.model === q.model) &&
        (q.since === undefined || r.created >= q.since) &&
        (q.until === undefined || r.created <= q.until) &&
        (q.after === undefined || compareCursor(r.cursor, q.after) > 0) &&
        (q.before === undefined || compareCursor(r.cursor, q.before) < 0),
    )
    .sort((a, b) => compareCursor(a.cursor, b.cursor))
    .map((r) => ({ ...r }));
  return q.after !== undefined ? out.slice(0, q.limit) : out.slice(Math.max(0, out.length - q.limit));
}
