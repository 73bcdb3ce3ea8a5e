/** Reading the daily rollups SETTLE keeps (layout: lua/README.md): one pipelined read per account. */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { addTotals, sortRows, type DailyQuery, type DailyRow, type DailyUsage } from '../records/rollups';
import type { UsageTotals } from '../records/common';

/** Accounts read at once when every account's days are summed. */
const BATCH = 50;

/** The query's days of these accounts, summed; `from` is the latest first whole day among them. */
export async function readRollups(
  redis: Redis | Cluster,
  accountIds: readonly string[],
  slotKey: (accountId: string, part: string) => string,
  q: DailyQuery,
): Promise<DailyUsage> {
  const rows = new Map<string, DailyRow>();
  let from = q.sinceDay;
  for (let i = 0; i < accountIds.length; i += BATCH) {
    const read = await Promise.all(accountIds.slice(i, i + BATCH).map((id) => readAccount(redis, id, slotKey, q)));
    for (const one of read) {
      from = Math.max(from, one.from);
      for (const r of one.rows) {
        const id = `${r.day}\n${r.by}\n${r.name}`;
        const row = rows.get(id);
        if (row) addTotals(row, r);
        else rows.set(id, r);
      }
    }
  }
  return { rows: sortRows([...rows.values()]), from };
}

/** One account's days in one round trip (its keys share a slot, so one pipeline serves Redis Cluster too). */
async function readAccount(
  redis: Redis | Cluster,
  accountId: string,
  slotKey: (accountId: string, part: string) => string,
  q: DailyQuery,
): Promise<DailyUsage> {
  const pipe = redis.pipeline().hget(slotKey(accountId, 'a'), 'ru');
  for (let day = q.sinceDay; day <= q.untilDay; day++) pipe.hgetall(slotKey(accountId, `d:${day}`));
  const replies = (await pipe.exec()) ?? [];
  const rows: DailyRow[] = [];
  replies.forEach(([err, value], i) => {
    if (err) throw err;
    if (i === 0) return;
    for (const [field, packed] of Object.entries(value as Record<string, string>))
      rows.push({ day: q.sinceDay + i - 1, by: field.startsWith('m:') ? 'model' : 'key', name: field.slice(2), ...unpack(packed) });
  });
  const since = replies[0]?.[1];
  // No `ru`: the account settled nothing since rollups began, so none of its days is held by them.
  return { rows, from: typeof since === 'string' ? Number(since) : q.untilDay + 1 };
}

/** "requests:prompt:completion:cached:reasoning:charged" (later sums, from a later version, ignored). */
function unpack(packed: string): UsageTotals {
  const [requests, promptTokens, completionTokens, cachedTokens, reasoningTokens, chargedTokens] = packed.split(':').map(Number);
  return { requests, promptTokens, completionTokens, cachedTokens, reasoningTokens, chargedTokens };
}
