/**
 * /admin/webhooks: the operator's webhook endpoints (a URL, the event types it wants, a secret shown once), their
 * deliveries and attempts, redelivery by hand; and /admin/accounts/:id/low-balance, an account's balance.low threshold.
 */
import express, { Router } from 'express';
import { z } from 'zod';
import { createWebhookRequest, deliveryObject, endpointDetailObject, endpointObject, lowBalanceRequest } from '../api/webhook';
import { newWebhookSecret } from '../events/signature';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import type { StoreGuard } from '../http/store-guard';
import { newId } from '../store/ids';
import type { EventOutbox } from '../store/ports/event-outbox';
import type { WebhookStore } from '../store/ports/webhook-store';

const limitSchema = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

export function webhooksRoutes(deps: { webhooks: WebhookStore; outbox: Pick<EventOutbox, 'setLowBalance'>; guard: StoreGuard }): Router {
  const { webhooks, outbox, guard } = deps;
  const router = Router();
  router.use(['/webhooks', '/accounts/:id/low-balance'], express.json({ limit: '64kb', type: () => true }));
  const endpointNotFound = (id: string) => apiError('not_found', `No webhook endpoint with id '${id}'.`, 'id');
  const deliveryNotFound = (id: string) => apiError('not_found', `No ended delivery with id '${id}'.`, 'id');

  router.post(
    '/webhooks',
    guard(async (req, res) => {
      const parsed = createWebhookRequest.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const endpoint = {
        id: newId('we'),
        url: parsed.data.url,
        types: [...new Set(parsed.data.events)],
        secret: newWebhookSecret(),
        created: Math.floor(Date.now() / 1000),
        ...(parsed.data.batch_size === undefined ? {} : { batch: parsed.data.batch_size }),
      };
      await webhooks.createEndpoint(endpoint);
      res.status(201).json({ ...endpointObject(endpoint), secret: endpoint.secret });
    }),
  );

  router.get(
    '/webhooks',
    guard(async (_req, res) => {
      res.json({ data: (await webhooks.listEndpoints()).map(endpointObject) });
    }),
  );

  router.get(
    '/webhooks/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const endpoint = (await webhooks.listEndpoints()).find((e) => e.id === id);
      if (!endpoint) return sendError(res, endpointNotFound(id));
      res.json(endpointDetailObject(endpoint, await webhooks.backlog(id), Math.floor(Date.now() / 1000)));
    }),
  );

  router.delete(
    '/webhooks/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      if (!(await webhooks.deleteEndpoint(id))) return sendError(res, endpointNotFound(id));
      res.json({ id, deleted: true });
    }),
  );

  router.get(
    '/webhooks/:id/deliveries',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const q = limitSchema.safeParse(req.query);
      if (!q.success) return sendError(res, invalidRequest(q.error));
      if (!(await webhooks.listEndpoints()).some((e) => e.id === id)) return sendError(res, endpointNotFound(id));
      res.json({ data: (await webhooks.listDeliveries(id, q.data.limit)).map(deliveryObject) });
    }),
  );

  router.post(
    '/webhooks/deliveries/:id/redeliver',
    guard(async (req, res) => {
      const id = String(req.params.id);
      if (!(await webhooks.redeliver(id))) return sendError(res, deliveryNotFound(id));
      res.json(deliveryObject((await webhooks.getDelivery(id))!));
    }),
  );

  router.put(
    '/accounts/:id/low-balance',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const parsed = lowBalanceRequest.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      if (!(await outbox.setLowBalance(id, parsed.data.tokens)))
        return sendError(res, apiError('not_found', `No account with id '${id}'.`, 'id'));
      res.json({ account_id: id, low_balance_tokens: parsed.data.tokens });
    }),
  );
  return router;
}
