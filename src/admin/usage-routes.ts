/** /admin/usage: the ledger, filtered by account, key, model and time, read incrementally after a cursor. */
import { Router } from 'express';
import { z } from 'zod';
import { adminRoute, type AdminContext } from './admin-routes';
import { usageObject } from './api-objects';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import { usageQuery } from '../console-api/schemas';

/** The console's usage query (the same parameters), plus the account to read: the operator may read any. */
export const usageQuerySchema = usageQuery.extend({ account_id: z.string().min(1).optional() });

export function usageRoutes(ctx: AdminContext): Router {
  const router = Router();
  router.get(
    '/usage',
    adminRoute(ctx.logger, async (req, res) => {
      const parsed = usageQuerySchema.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const q = parsed.data;
      if (q.after !== undefined && q.key_id === undefined && q.account_id === undefined) {
        return sendError(
          res,
          apiError(
            'invalid_request_error',
            "Invalid 'after': a cursor belongs to one account's ledger; give account_id or key_id too.",
            'after',
          ),
        );
      }
      const records = await ctx.store.usage({
        accountId: q.account_id,
        keyId: q.key_id,
        model: q.model,
        since: q.since,
        until: q.until,
        after: q.after,
        limit: q.limit,
      });
      res.json({ data: records.map(usageObject) });
    }),
  );
  return router;
}
