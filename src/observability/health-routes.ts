/** `GET /healthz` (alive) and `GET /readyz` (the store reachable, the process not draining). */
import { Router } from 'express';
import { apiError, sendError } from '../http/errors';
import type { ServingStore } from '../store/ports/store';

export function healthRouter(deps: { store: ServingStore; lifecycle: { draining: boolean } }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    if (deps.lifecycle.draining) return sendError(res, apiError('shutting_down', 'This instance is shutting down.'));
    try {
      await deps.store.ping();
      res.json({ status: 'ready', store: deps.store.kind });
    } catch {
      sendError(res, apiError('store_unavailable', 'The metering store is not reachable.'));
    }
  });
  return router;
}
