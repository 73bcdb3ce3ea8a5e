/**
 * The operator's API, one router: accounts, keys, token packages, the usage ledger, products and redemption codes,
 * the models file's reload. It checks no credential itself: routers.ts mounts it behind ADMIN_TOKEN (at /admin) and
 * behind a console session of role admin (at /console/api/admin), so both reach the very same handlers.
 */
import express, { Router } from 'express';
import type { ModelsReloadedObject } from '../api/model';
import { upstreamPoolObject, type UpstreamPoolList } from '../api/upstream';
import type { PoolState } from '../upstreams/pools';
import { apiError, sendError } from '../http/errors';
import { accountsRoutes } from './accounts-routes';
import type { AdminContext } from './admin-routes';
import { keysRoutes } from './keys-routes';
import { productsRoutes } from './products-routes';
import { usageRoutes } from './usage-routes';
import { webhooksRoutes } from './webhooks-routes';
import type { EventOutbox } from '../store/ports/event-outbox';
import type { WebhookStore } from '../store/ports/webhook-store';

export interface OperatorApiOptions extends AdminContext {
  /** Reloads the models file; resolves to the number of models, rejects with the reason the file was refused. */
  reloadModels?: () => Promise<number>;
  /** Webhook endpoints and their deliveries, and the outbox's thresholds; unset: no webhook routes. */
  webhooks?: { store: WebhookStore; outbox: Pick<EventOutbox, 'setLowBalance'> };
  /** The upstream pools' state now (docs/upstream-pools.md); unset: no /upstreams route. */
  upstreams?: () => PoolState[];
}

export function operatorApi(options: OperatorApiOptions): Router {
  const { reloadModels, webhooks, upstreams, ...ctx } = options;
  const router = Router();
  router.use(express.json({ limit: '64kb', type: () => true }));

  for (const routes of [accountsRoutes, keysRoutes, usageRoutes, productsRoutes]) router.use(routes(ctx));
  if (webhooks) router.use(webhooksRoutes({ webhooks: webhooks.store, outbox: webhooks.outbox, guard: ctx.guard }));

  if (reloadModels) {
    router.post('/models/reload', async (_req, res) => {
      try {
        const reloaded: ModelsReloadedObject = { reloaded: true, models: await reloadModels() };
        res.json(reloaded);
      } catch (err) {
        sendError(res, apiError('invalid_request_error', `The models file was refused; the old catalog stays: ${(err as Error).message}`));
      }
    });
  }

  if (upstreams) {
    router.get('/upstreams', (_req, res) => {
      const list: UpstreamPoolList = { object: 'list', data: upstreams().map(upstreamPoolObject) };
      res.json(list);
    });
  }

  router.use((req, res) => sendError(res, apiError('not_found', `Unknown admin route: ${req.method} ${req.baseUrl}${req.path}`)));
  return router;
}
