/** The shipper's port onto the live ledger (the accounts' Redis streams): records, the shipped cursor, the lease. */
import type { UsageRecord } from '../records/metering';

export interface ShipSource {
  accounts(): Promise<string[]>;
  /** Takes or renews the account's shipping lease for `owner`; false while another shipper holds it. */
  lease(accountId: string, owner: string, ms: number): Promise<boolean>;
  /** Gives the lease up if `owner` holds it. */
  release(accountId: string, owner: string): Promise<void>;
  /** Whether the account has records after its shipped cursor: one round trip, to pass idle accounts by. */
  pending(accountId: string): Promise<boolean>;
  /** The last record shipped ('0-0': none). */
  shipped(accountId: string): Promise<string>;
  /** Up to `count` records after the cursor, oldest first. */
  read(accountId: string, after: string, count: number): Promise<UsageRecord[]>;
  /**
   * Moves the shipped cursor forward to `cursor` (n records more), only while `owner` holds the lease, and with
   * `keepFromMs` trims what is shipped and older than it. False: the lease was lost, nothing changed.
   */
  advance(accountId: string, owner: string, cursor: string, n: number, keepFromMs: number | null): Promise<boolean>;
  /** Records not shipped yet, and when the oldest of them was written (ms; null: none). */
  backlog(accountId: string): Promise<{ records: number; oldestMs: number | null }>;
  /** Without an archive: drops records older than `beforeMs` (LEDGER_TRIM_AFTER_DAYS). */
  trim(accountId: string, beforeMs: number): Promise<void>;
}
