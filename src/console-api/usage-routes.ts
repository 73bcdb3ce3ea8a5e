/** The account holder's usage: ledger records (the same parameters as /admin/usage) and daily totals per model. */
import { Router } from 'express';
import { dailyUsageQuery, ledgerQuery, usageObject, usageQuery, type DailyUsageObject } from '../api';
import { apiError, sendError } from '../http/errors';
import type { StoreGuard } from '../http/store-guard';
import { invalidRequest } from '../http/zod-errors';
import type { KeyLookup } from '../store/ports/key-lookup';
import type { UsageLedger } from '../store/ports/usage-ledger';
import { sessionAccount } from './session-auth';

const DAY = 86_400;
const PAGE = 1000;

export function usageRoutes(deps: { store: KeyLookup & UsageLedger; guard: StoreGuard }): Router {
  const { store, guard } = deps;
  const router = Router();

  router.get(
    '/',
    guard(async (req, res) => {
      const parsed = usageQuery.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const q = parsed.data;
      const account = sessionAccount(res);
      if (q.key_id !== undefined) {
        const key = await store.getKey(q.key_id);
        if (!key || key.accountId !== account.id) return sendError(res, apiError('not_found', `No key with id '${q.key_id}'.`, 'key_id'));
      }
      const records = await store.usage(ledgerQuery(q, account.id));
      res.json({ data: records.map(usageObject) });
    }),
  );

  router.get(
    '/daily',
    guard(async (req, res) => {
      const parsed = dailyUsageQuery.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const now = Math.floor(Date.now() / 1000);
      const since = (Math.floor(now / DAY) - parsed.data.days + 1) * DAY;
      res.json({ data: await dailyTotals(store, sessionAccount(res).id, since) });
    }),
  );

  return router;
}

/**
 * Sums the account's ledger from `since` per UTC day and model, reading it oldest first a page at a time. Days
 * without requests have no row.
 */
async function dailyTotals(store: UsageLedger, accountId: string, since: number): Promise<DailyUsageObject[]> {
  const rows = new Map<string, DailyUsageObject>();
  // A cursor just before the first millisecond of `since`: the ledger is read forward from there.
  let after = `${since * 1000 - 1}-${Number.MAX_SAFE_INTEGER}`;
  for (;;) {
    const page = await store.usage({ accountId, after, limit: PAGE });
    for (const r of page) {
      const date = new Date(r.created * 1000).toISOString().slice(0, 10);
      const id = `${date}\n${r.model}`;
      let row = rows.get(id);
      if (!row) {
        const zero = { requests: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, charged_tokens: 0 };
        rows.set(id, (row = { date, model: r.model, ...zero }));
      }
      row.requests += 1;
      row.prompt_tokens += r.promptTokens;
      row.completion_tokens += r.completionTokens;
      row.cached_tokens += r.cachedTokens;
      row.reasoning_tokens += r.reasoningTokens;
      row.charged_tokens += r.chargedTokens;
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1].cursor;
  }
  return [...rows.values()].sort((a, b) => a.date.localeCompare(b.date) || a.model.localeCompare(b.model));
}
