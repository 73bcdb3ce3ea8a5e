/** /admin/usage: the ledger, filtered by account, key, model and time, read incrementally after a cursor. */
import { Router } from 'express';
import { z } from 'zod';
import { adminRoute, type AdminContext } from './admin-routes';
import { usageObject } from './api-objects';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';

const unixTime = z.coerce.number({ error: 'must be a Unix time in seconds' }).int('must be a Unix time in seconds').nonnegative();

export const usageQuerySchema = z.strictObject({
  account_id: z.string().min(1).optional(),
  key_id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  since: unixTime.optional(),
  until: unixTime.optional(),
  after: z
    .string()
    .regex(/^\d+-\d+$/, 'must be a cursor from an earlier page')
    .optional(),
  limit: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(1000, 'must be at most 1000')
    .default(100),
});

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
