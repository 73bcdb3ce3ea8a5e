/** Reading the usage ledger (one Redis stream per account), filtered, paged by cursor, oldest first. */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { compareCursor } from '../ids';
import { parseUsageEntry } from './redis-records';
import type { UsageQuery, UsageRecord } from '../records/metering';

/** The matching records of these accounts' ledgers, merged in cursor order. */
export async function readLedgers(
  redis: Redis | Cluster,
  accountIds: string[],
  ledgerKey: (accountId: string) => string,
  q: UsageQuery,
): Promise<UsageRecord[]> {
  const all: UsageRecord[] = [];
  for (const id of accountIds) all.push(...(await readLedger(redis, id, ledgerKey(id), q)));
  all.sort((a, b) => compareCursor(a.cursor, b.cursor));
  return q.after !== undefined ? all.slice(0, q.limit) : all.slice(Math.max(0, all.length - q.limit));
}

/** One account's matching records: the first `limit` after a cursor, else the last `limit`; oldest first either way. */
async function readLedger(redis: Redis | Cluster, accountId: string, key: string, q: UsageQuery): Promise<UsageRecord[]> {
  const low = lowBound(q);
  const high = highBound(q);
  const page = Math.max(q.limit, 100);
  const out: UsageRecord[] = [];
  const forward = q.after !== undefined;
  let from = forward ? low : high;
  while (out.length < q.limit) {
    const entries = forward ? await redis.xrange(key, from, high, 'COUNT', page) : await redis.xrevrange(key, from, low, 'COUNT', page);
    for (const [cursor, fields] of entries) {
      const rec = parseUsageEntry(accountId, cursor, fields);
      if ((q.model === undefined || rec.model === q.model) && (q.keyId === undefined || rec.keyId === q.keyId)) out.push(rec);
    }
    if (entries.length < page) break;
    from = `(${entries[entries.length - 1][0]}`;
  }
  const taken = out.slice(0, q.limit);
  return forward ? taken : taken.reverse();
}

/** XRANGE's lower bound: the tighter of `after` (exclusive) and `since` (inclusive), so both hold. */
function lowBound(q: UsageQuery): string {
  const since = q.since !== undefined ? `${q.since * 1000}-0` : undefined;
  if (q.after !== undefined && (since === undefined || compareCursor(q.after, since) >= 0)) return `(${q.after}`;
  return since ?? '-';
}

/** XRANGE's upper bound: the tighter of `before` (exclusive) and `until` (inclusive, to its second's last entry). */
function highBound(q: UsageQuery): string {
  const until = q.until !== undefined ? `${q.until * 1000 + 999}-${Number.MAX_SAFE_INTEGER}` : undefined;
  if (q.before !== undefined && (until === undefined || compareCursor(q.before, until) <= 0)) return `(${q.before}`;
  return q.until !== undefined ? String(q.until * 1000 + 999) : '+';
}
