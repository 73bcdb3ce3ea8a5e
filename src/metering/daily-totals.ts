/**
 * Daily totals per UTC day and model, as the console's chart and the operator read them: from the rollups settlement
 * keeps (a read per day, whatever the number of records), and from the ledger only for days before the store kept
 * rollups (an upgrade's first weeks).
 */
import type { UsageLedger } from '../store/ports/usage-ledger';
import { addTotals, DAY_SECONDS, sortRows, type DailyRow } from '../store/records/rollups';

const PAGE = 1000;

/** The last `days` UTC days up to `nowS`'s, per day and model (days without requests have no row), oldest first. */
export async function dailyModelTotals(store: UsageLedger, accountId: string | undefined, days: number, nowS: number): Promise<DailyRow[]> {
  const untilDay = Math.floor(nowS / DAY_SECONDS);
  const sinceDay = untilDay - days + 1;
  // A host's store without rollups: every day from the ledger (one account's), as before rollups.
  const { rows, from } = store.daily ? await store.daily({ accountId, sinceDay, untilDay }) : { rows: [], from: untilDay + 1 };
  // The operator's sum over every account has no ledger fallback: scanning every ledger is what rollups replace.
  if (from <= sinceDay || accountId === undefined) return rows.filter((r) => r.by === 'model');
  // Days before `from` are partial in the rollups (or absent): they come from the ledger alone.
  const models = rows.filter((r) => r.by === 'model' && r.day >= from);
  const early = await ledgerTotals(store, accountId, sinceDay, Math.min(from, untilDay + 1));
  return sortRows([...early, ...models]);
}

/** Sums the account's ledger over the days [sinceDay, beforeDay), per day and model, a page at a time. */
async function ledgerTotals(store: UsageLedger, accountId: string, sinceDay: number, beforeDay: number): Promise<DailyRow[]> {
  const rows = new Map<string, DailyRow>();
  const until = beforeDay * DAY_SECONDS - 1;
  // A cursor just before the first millisecond of the first day: the ledger is read forward from there.
  let after = `${sinceDay * DAY_SECONDS * 1000 - 1}-${Number.MAX_SAFE_INTEGER}`;
  for (;;) {
    const page = await store.usage({ accountId, after, until, limit: PAGE });
    for (const r of page) {
      const day = Math.floor(r.created / DAY_SECONDS);
      const id = `${day}\n${r.model}`;
      let row = rows.get(id);
      if (!row) {
        const zero = { requests: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0, chargedTokens: 0 };
        rows.set(id, (row = { day, by: 'model', name: r.model, ...zero }));
      }
      addTotals(row, { ...r, requests: 1 });
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1].cursor;
  }
  return [...rows.values()];
}
