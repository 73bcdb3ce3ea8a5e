/**
 * The account holder's API keys: list, create (the secret shown once), change the budget, and delete; never another
 * account's.
 */
import { Router } from 'express';
import {
  createOwnKeyRequest,
  keyLimit,
  ownKeyObject,
  updateOwnKeyRequest,
  type CreatedOwnKeyObject,
  type DeletedKeyObject,
  type OwnKeyObject,
} from '../api';
import type { Catalog } from '../catalog/models';
import { unservedModel } from '../catalog/served-models';
import { apiError, sendError } from '../http/errors';
import { generateKey } from '../http/keys';
import type { StoreGuard } from '../http/store-guard';
import { invalidRequest } from '../http/zod-errors';
import { hasLimits } from '../limits/limits';
import type { Logger } from '../observability/logger';
import type { KeyStore } from '../store/ports/key-store';
import { sessionAccount } from './session-auth';

export interface KeyRoutesDeps {
  store: KeyStore;
  catalog: () => Catalog;
  logger: Logger;
  guard: StoreGuard;
  /** The most keys an account may have (MAX_KEYS_PER_ACCOUNT). */
  maxKeys: number;
}

export function keyRoutes(deps: KeyRoutesDeps): Router {
  const { store, logger, guard } = deps;
  const router = Router();
  // Another account's key answers exactly like a key that does not exist: ids reveal nothing.
  const notFound = (id: string) => apiError('not_found', `No key with id '${id}'.`, 'id');

  router.get(
    '/',
    guard(async (_req, res) => {
      res.json({ data: (await store.listKeys(sessionAccount(res).id)).map(ownKeyObject) });
    }),
  );

  router.post(
    '/',
    guard(async (req, res) => {
      const parsed = createOwnKeyRequest.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const input = parsed.data;
      const refusal = unservedModel(deps.catalog(), input.models);
      if (refusal) return sendError(res, refusal);
      const account = sessionAccount(res);
      const secret = generateKey();
      const created = await store.createKey(account.id, {
        hash: secret.hash,
        prefix: secret.prefix,
        name: input.name,
        expiresAt: input.expires_at ?? null,
        models: input.models ? [...new Set(input.models)] : null,
        limitTokens: input.limit_tokens ?? null,
        limits: hasLimits(input.limits) ? input.limits : null,
        budget: input.budget ?? null,
        maxKeys: deps.maxKeys,
      });
      if (created.kind === 'key_limit') return sendError(res, keyLimit(created.maxKeys));
      if (created.kind !== 'created')
        return sendError(res, apiError('session_required', 'Log in first: this route needs a console session.'));
      const record = created.key;
      logger.info({ accountId: account.id, keyId: record.id }, 'key created in the console');
      const answer: CreatedOwnKeyObject = { ...ownKeyObject(record), key: secret.secret };
      res.status(201).json(answer);
    }),
  );

  router.patch(
    '/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const parsed = updateOwnKeyRequest.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const key = await store.getKey(id);
      const account = sessionAccount(res);
      if (!key || key.accountId !== account.id) return sendError(res, notFound(id));
      const record = await store.updateKey(id, { budget: parsed.data.budget });
      if (!record) return sendError(res, notFound(id));
      logger.info({ accountId: account.id, keyId: id }, 'key budget changed in the console');
      const answer: OwnKeyObject = ownKeyObject(record);
      res.json(answer);
    }),
  );

  router.delete(
    '/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const key = await store.getKey(id);
      const account = sessionAccount(res);
      if (!key || key.accountId !== account.id) return sendError(res, notFound(id));
      await store.revokeKey(id);
      logger.info({ accountId: account.id, keyId: id }, 'key deleted in the console');
      const answer: DeletedKeyObject = { id, deleted: true };
      res.json(answer);
    }),
  );

  return router;
}
