/** The ledger archive's state as the operator reads it (`GET /admin/ledger`, `tokenmeter ledger status`). */
import { z } from 'zod';
import type { LedgerStatus } from '../ledger-archive/ledger-status';

export const ledgerStatusSchema = z.strictObject({
  /** Whether LEDGER_DATABASE_URL is set: records are shipped to PostgreSQL and trimmed from Redis behind them. */
  archive: z.boolean(),
  /** Records not yet in PostgreSQL (0 without the archive). */
  backlog_records: z.number().int().nonnegative(),
  /** Age of the oldest of them; null when there is none. */
  oldest_unshipped_seconds: z.number().int().nonnegative().nullable(),
  /** Accounts with a backlog or a shipped cursor. */
  accounts: z.array(z.strictObject({ account_id: z.string(), shipped_cursor: z.string().nullable(), backlog_records: z.number().int() })),
  /** The archive's month partitions, oldest first, with their rows (counted when `exact`, else PostgreSQL's estimate);
   * null: PostgreSQL did not answer. */
  partitions: z.array(z.strictObject({ name: z.string(), rows: z.number().int(), exact: z.boolean() })).nullable(),
});
export type LedgerStatusObject = z.infer<typeof ledgerStatusSchema>;

export function ledgerStatusObject(s: LedgerStatus): LedgerStatusObject {
  return {
    archive: s.archive,
    backlog_records: s.backlogRecords,
    oldest_unshipped_seconds: s.oldestUnshippedSeconds,
    accounts: s.accounts.map((a) => ({ account_id: a.accountId, shipped_cursor: a.shippedCursor, backlog_records: a.backlogRecords })),
    partitions: s.partitions,
  };
}
