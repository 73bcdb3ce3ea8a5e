/**
 * /admin/usage: the ledger, filtered by account, key, model and time, read incrementally after a cursor or back in time before one;
 * /admin/usage/daily: totals per UTC day and model, of one account or all, from the settle step's rollups.
 */
import { Router } from 'express';
import {
  dailyUsageObject,
  ledgerStatusObject,
  ledgerQuery,
  operatorDailyUsageQuery,
  operatorUsageObject,
  operatorUsageQuery,
  type OperatorUsageObject,
} from '../api';
import { dailyModelTotals } from '../metering/daily-totals';
import { ledgerStatus } from '../ledger-archive/ledger-status';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import type { AccountStore } from '../store/ports/account-store';
import type { KeyStore } from '../store/ports/key-store';
import type { UsageRecord } from '../store/records/metering';
import type { AdminContext } from './admin-routes';

export function usageRoutes(ctx: AdminContext): Router {
  const router = Router();
  router.get(
    '/usage',
    ctx.guard(async (req, res) => {
      const parsed = operatorUsageQuery.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const q = parsed.data;
      const cursorParam = q.after !== undefined ? 'after' : q.before !== undefined ? 'before' : undefined;
      if (cursorParam !== undefined && q.key_id === undefined && q.account_id === undefined) {
        return sendError(
          res,
          apiError(
            'invalid_request_error',
            `Invalid '${cursorParam}': a cursor belongs to one account's ledger; give account_id or key_id too.`,
            cursorParam,
          ),
        );
      }
      const records = await ctx.store.usage(ledgerQuery(q, q.account_id));
      const names = await namesOf(ctx.store, records);
      const data: OperatorUsageObject[] = records.map((r) =>
        operatorUsageObject(r, {
          accountEmail: names.emails.get(r.accountId) ?? null,
          keyName: r.keyId === null ? null : (names.keys.get(r.keyId) ?? null),
        }),
      );
      res.json({ data });
    }),
  );
  router.get(
    '/usage/daily',
    ctx.guard(async (req, res) => {
      const parsed = operatorDailyUsageQuery.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const { account_id, days } = parsed.data;
      const rows = await dailyModelTotals(ctx.store, account_id, days, Math.floor(Date.now() / 1000));
      res.json({ data: rows.map(dailyUsageObject) });
    }),
  );
  router.get(
    '/ledger',
    ctx.guard(async (_req, res) => {
      res.json(ledgerStatusObject(ctx.ledgerStatus ? await ctx.ledgerStatus() : await ledgerStatus(undefined, null)));
    }),
  );
  return router;
}

/**
 * The emails of the records' accounts and the names of their keys, read once per account in the page (the accounts
 * in one batch, each account's keys together), not once per record.
 */
async function namesOf(
  store: Pick<AccountStore, 'getAccounts'> & Pick<KeyStore, 'listKeys'>,
  records: UsageRecord[],
): Promise<{ emails: Map<string, string | null>; keys: Map<string, string> }> {
  const accountIds = [...new Set(records.map((r) => r.accountId))];
  const [accounts, keyLists] = await Promise.all([store.getAccounts(accountIds), Promise.all(accountIds.map((id) => store.listKeys(id)))]);
  const emails = new Map(accountIds.map((id, i) => [id, accounts[i]?.email ?? null]));
  const keys = new Map(keyLists.flat().map((k) => [k.id, k.name]));
  return { emails, keys };
}
