/** The account holder's API keys: list, create (the secret shown once) and delete; never another account's. */
import { Router } from 'express';
import { generateKey } from '../http/keys';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import type { Catalog } from '../catalog/models';
import type { Logger } from '../observability/logger';
import type { KeyStore } from '../store/ports/key-store';
import { apiKeyObject } from './objects';
import { createKeyRequest } from './schemas';
import { hasLimits, limitsSchema } from '../limits/limits';
import { sessionAccount } from './session-auth';
import type { storeGuard } from './store-guard';

export interface KeyRoutesDeps {
  store: KeyStore;
  catalog: () => Catalog;
  logger: Logger;
  guard: ReturnType<typeof storeGuard>;
}

export function keyRoutes(deps: KeyRoutesDeps): Router {
  const { store, logger, guard } = deps;
  const router = Router();
  // Another account's key answers exactly like a key that does not exist: ids reveal nothing.
  const notFound = (id: string) => apiError('not_found', `No key with id '${id}'.`, 'id');

  router.get(
    '/',
    guard(async (_req, res) => {
      res.json({ data: (await store.listKeys(sessionAccount(res).id)).map(apiKeyObject) });
    }),
  );

  router.post(
    '/',
    guard(async (req, res) => {
      const parsed = createKeyRequest.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const input = parsed.data;
      const catalog = deps.catalog();
      const unknown = input.models?.findIndex((m) => catalog.get(m) === undefined) ?? -1;
      if (unknown !== -1) {
        const param = `models[${unknown}]`;
        return sendError(
          res,
          apiError('invalid_request_error', `Invalid '${param}': '${input.models![unknown]}' is not a served model.`, param),
        );
      }
      const account = sessionAccount(res);
      const limits = input.limits && limitsSchema.parse(input.limits);
      const secret = generateKey();
      const record = await store.createKey(account.id, {
        hash: secret.hash,
        prefix: secret.prefix,
        name: input.name,
        expiresAt: input.expires_at ?? null,
        models: input.models ? [...new Set(input.models)] : null,
        limitTokens: input.limit_tokens ?? null,
        limits: hasLimits(limits) ? limits : null,
      });
      if (!record) return sendError(res, apiError('session_required', 'Log in first: this route needs a console session.'));
      logger.info({ accountId: account.id, keyId: record.id }, 'key created in the console');
      res.status(201).json({ ...apiKeyObject(record), key: secret.secret });
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
      res.json({ id, deleted: true });
    }),
  );

  return router;
}
