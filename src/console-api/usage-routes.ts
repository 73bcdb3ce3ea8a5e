/** The account holder's usage: ledger records (the same parameters as /admin/usage) and daily totals per model. */
import { Router } from 'express';
import { dailyUsageObject, dailyUsageQuery, ledgerQuery, usageObject, usageQuery } from '../api';
import { dailyModelTotals } from '../metering/daily-totals';
import { apiError, sendError } from '../http/errors';
import type { StoreGuard } from '../http/store-guard';
import { invalidRequest } from '../http/zod-errors';
import type { KeyLookup } from '../store/ports/key-lookup';
import type { UsageLedger } from '../store/ports/usage-ledger';
import { sessionAccount } from './session-auth';

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
      const rows = await dailyModelTotals(store, sessionAccount(res).id, parsed.data.days, Math.floor(Date.now() / 1000));
      res.json({ data: rows.map(dailyUsageObject) });
    }),
  );

  return router;
}
