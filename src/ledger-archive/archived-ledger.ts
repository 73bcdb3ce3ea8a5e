/**
 * One ledger over its two homes: PostgreSQL for what was shipped (up to each account's shipped cursor) and Redis for
 * the rest, with the same cursors, filters and order, so a reader paging across the boundary neither misses nor
 * repeats a record (records shipped but still in Redis' hot window are read from PostgreSQL only). With PostgreSQL
 * down, a page Redis alone holds is served from Redis (it keeps the ledger's newest records, hot window included); any
 * other is `503 archive_unavailable`, naming the archive rather than the metering store.
 */
import { apiError, PartOutage } from '../http/errors';
import { compareCursor } from '../store/ids';
import type { KeyLookup } from '../store/ports/key-lookup';
import type { ShipSource } from '../store/ports/ship-source';
import type { UsageLedger } from '../store/ports/usage-ledger';
import type { UsageQuery, UsageRecord } from '../store/records/metering';
import type { LedgerArchive } from './ledger-archive';

type Live = Pick<UsageLedger, 'usage'> & Pick<KeyLookup, 'getKey'>;

const archiveDown = (err: Error) =>
  Object.assign(
    new PartOutage(
      apiError(
        'archive_unavailable',
        'The ledger archive (PostgreSQL) is unavailable: records older than Redis holds cannot be read now; the newest can. Try again shortly.',
      ),
    ),
    { cause: err },
  );

/** The `usage` of a store whose ledger is archived. */
export function archivedUsage(live: Live, source: Pick<ShipSource, 'shipped' | 'accounts'>, archive: LedgerArchive): UsageLedger['usage'] {
  async function accountRecords(accountId: string, q: UsageQuery): Promise<UsageRecord[]> {
    const upTo = await source.shipped(accountId);
    if (upTo === '0-0') return live.usage({ ...q, accountId });
    if (q.after !== undefined) {
      // The oldest `limit` after the cursor: PostgreSQL's up to the shipped cursor, then Redis' beyond it.
      const beyond = compareCursor(q.after, upTo) >= 0;
      const [shipped, unshipped] = await Promise.all([
        beyond
          ? []
          : archive.read(accountId, q, upTo).catch((err: Error) => {
              throw archiveDown(err);
            }),
        live.usage({ ...q, accountId, after: beyond ? q.after : upTo }),
      ]);
      return [...shipped, ...unshipped];
    }
    // The newest `limit`: Redis holds every unshipped record, so its newest `limit` hold all of them that can count.
    const [shipped, recent] = await Promise.all([
      archive.read(accountId, q, upTo).catch((err: Error) => err),
      live.usage({ ...q, accountId }),
    ]);
    if (shipped instanceof Error) {
      // Redis keeps the ledger's newest records (shipped ones for the hot window): when they fill the page, it is whole.
      if (recent.length >= q.limit) return recent;
      throw archiveDown(shipped);
    }
    return [...shipped, ...recent.filter((r) => compareCursor(r.cursor, upTo) > 0)];
  }

  return async (q) => {
    let ids: string[];
    if (q.accountId !== undefined) ids = [q.accountId];
    else if (q.keyId !== undefined) ids = [(await live.getKey(q.keyId))?.accountId].filter((id): id is string => id !== undefined);
    else ids = await source.accounts();
    const all: UsageRecord[] = [];
    for (const id of ids) all.push(...(await accountRecords(id, q)));
    all.sort((a, b) => compareCursor(a.cursor, b.cursor));
    return q.after !== undefined ? all.slice(0, q.limit) : all.slice(Math.max(0, all.length - q.limit));
  };
}
