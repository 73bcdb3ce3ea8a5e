/** How far the archive is behind: the backlog, each account's shipped cursor and lag, and the partitions. */
import type { ShipSource } from '../store/ports/ship-source';
import type { LedgerArchive } from './ledger-archive';

export interface LedgerStatus {
  archive: boolean;
  backlogRecords: number;
  oldestUnshippedSeconds: number | null;
  /** Accounts with a backlog or a shipped cursor. */
  accounts: { accountId: string; shippedCursor: string | null; backlogRecords: number }[];
  /** Null when PostgreSQL does not answer (the status is wanted most then). */
  partitions: { name: string; rows: number; exact: boolean }[] | null;
}

export async function ledgerStatus(
  source: ShipSource | undefined,
  archive: LedgerArchive | null,
  nowMs = Date.now(),
): Promise<LedgerStatus> {
  const accounts: LedgerStatus['accounts'] = [];
  let oldest: number | null = null;
  if (source && archive)
    for (const id of await source.accounts()) {
      const [cursor, backlog] = await Promise.all([source.shipped(id), source.backlog(id)]);
      if (backlog.oldestMs !== null && (oldest === null || backlog.oldestMs < oldest)) oldest = backlog.oldestMs;
      if (backlog.records > 0 || cursor !== '0-0')
        accounts.push({ accountId: id, shippedCursor: cursor === '0-0' ? null : cursor, backlogRecords: backlog.records });
    }
  return {
    archive: archive !== null,
    backlogRecords: accounts.reduce((sum, a) => sum + a.backlogRecords, 0),
    oldestUnshippedSeconds: oldest === null ? null : Math.max(0, Math.round((nowMs - oldest) / 1000)),
    accounts,
    partitions: archive ? await archive.partitions().catch(() => null) : [],
  };
}
