/**
 * Stored responses' owners over their two homes, with the archive on: Redis holds each day's owners until the day is
 * shipped and its hot window (LEDGER_HOT_HOURS) has passed, PostgreSQL every shipped day. A lookup asks Redis first,
 * then PostgreSQL for the ids Redis lacks, in one query. PostgreSQL unreachable then: those owners are unknown (`get`:
 * none, `items`: null), which every caller refuses as not the caller's (fail closed: never another account's),
 * logged and counted.
 */
import type { Logger } from '../observability/logger';
import type { OwnerRow } from '../store/ports/owner-ship-source';
import { RESPONSE_OWNER_DAYS, type ResponseOwners } from '../store/ports/response-owners';
import type { OwnersArchive } from './owners-archive';

const DAY_MS = 86_400_000;

export interface ArchivedOwnersOptions {
  logger: Logger;
  /** Counts a lookup PostgreSQL did not answer. */
  failed: () => void;
  now?: () => number;
}

export function archivedOwners(live: ResponseOwners, archive: OwnersArchive, o: ArchivedOwnersOptions): ResponseOwners {
  const now = o.now ?? Date.now;

  /** The archive's rows of these ids still within their 30 days (as long as Redis would keep them); null: no answer. */
  async function archived(ids: string[]): Promise<Map<string, OwnerRow> | null> {
    try {
      return await archive.find(ids, Math.floor(now() / DAY_MS) - RESPONSE_OWNER_DAYS);
    } catch (err) {
      o.failed();
      o.logger.warn(
        { ids: ids.length, err: (err as Error).message },
        'response owners archive unreachable: owners not in Redis are refused',
      );
      return null;
    }
  }

  return {
    record: (answer) => live.record(answer),
    async get(responseId) {
      const hot = await live.get(responseId);
      if (hot) return hot;
      const row = (await archived([responseId]))?.get(responseId);
      return row && row.model !== null ? { accountId: row.accountId, model: row.model, tokens: row.tokens ?? undefined } : undefined;
    },
    async items(ids) {
      const hot = await live.items(ids);
      const missing = [...new Set(ids.filter((_, i) => hot[i] === undefined))];
      if (missing.length === 0) return hot;
      const rows = await archived(missing);
      return hot.map((owner, i) => {
        if (owner !== undefined) return owner;
        const row = rows === null ? null : rows.get(ids[i]);
        return row && { accountId: row.accountId, tokens: row.tokens ?? undefined };
      });
    },
    // Redis first: a day not shipped yet then ships without it.
    async forget(responseId) {
      await live.forget(responseId);
      await archive.forget(responseId);
    },
  };
}
