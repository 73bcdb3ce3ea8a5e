/**
 * The admin API under /admin (only when ADMIN_TOKEN is set): accounts, keys, token packages and the usage ledger, for
 * the CLI and for operators' scripts. JSON in snake_case, times as Unix seconds, errors in the OpenAI shape. Each
 * resource's routes live in a file of their own, mounted here behind the admin token.
 */
import express, { Router } from 'express';
import { accountsRoutes } from './accounts-routes';
import { adminToken } from './admin-token';
import type { AdminContext } from './admin-routes';
import { keysRoutes } from './keys-routes';
import { usageRoutes } from './usage-routes';
import { apiError, sendError } from '../http/errors';

export interface AdminApiOptions extends AdminContext {
  token: string;
  /** Reloads the models file; resolves to the number of models, rejects with the reason the file was refused. */
  reloadModels?: () => Promise<number>;
}

export function adminApi(options: AdminApiOptions): Router {
  const ctx: AdminContext = { store: options.store, catalog: options.catalog, logger: options.logger };
  const router = Router();
  router.use(adminToken(options.token));
  router.use(express.json({ limit: '64kb', type: () => true }));

  for (const routes of [accountsRoutes, keysRoutes, usageRoutes]) router.use(routes(ctx));

  if (options.reloadModels) {
    const reload = options.reloadModels;
    router.post('/models/reload', async (_req, res) => {
      try {
        res.json({ reloaded: true, models: await reload() });
      } catch (err) {
        sendError(res, apiError('invalid_request_error', `The models file was refused; the old catalog stays: ${(err as Error).message}`));
      }
    });
  }

  router.use((req, res) => sendError(res, apiError('not_found', `Unknown admin route: ${req.method} ${req.baseUrl}${req.path}`)));
  return router;
}
