/**
 * The admin API under /admin (only when ADMIN_TOKEN is set): keys, token packages and the usage ledger, for the
 * CLI and for operators' scripts. JSON in snake_case, times as Unix seconds, errors in the OpenAI shape.
 */
import express, { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { adminToken } from './admin-token';
import { keyDetailObject, keyObject, packageObject, usageObject } from './api-objects';
import { apiError, sendError, STORE_UNAVAILABLE } from '../http/errors';
import { generateKey } from '../http/keys';
import type { Logger } from '../observability/logger';
import type { Catalog } from '../catalog/models';
import type { Store } from '../store/types';
import { invalidRequest } from '../http/zod-errors';
import { hasLimits, limitsSchema } from '../limits/limits';

export interface AdminApiOptions {
  token: string;
  store: Store;
  catalog: () => Catalog;
  logger: Logger;
  /** Reloads the models file; resolves to the number of models, rejects with the reason the file was refused. */
  reloadModels?: () => Promise<number>;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const tokens = z
  .number({ error: 'must be a whole number of tokens' })
  .int('must be a whole number of tokens')
  .positive('must be at least 1')
  .max(Number.MAX_SAFE_INTEGER);
const futureTime = z
  .number({ error: 'must be a Unix time in seconds' })
  .int('must be a Unix time in seconds')
  .refine((t) => t > nowSeconds(), 'must be in the future');

const createKeySchema = z.strictObject({
  name: z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters').optional(),
  tokens: tokens.optional(),
  expires_at: futureTime.nullish(),
  models: z
    .array(z.string({ error: 'must be a model id' }), { error: 'must be an array of model ids' })
    .min(1, 'must name at least one model')
    .nullish(),
  /** `{rpm?, tpm?, max_concurrent?}`: the key's own rate and concurrency limits. */
  limits: limitsSchema.nullish(),
});

/** What PATCH /admin/keys/:id may change: the limits (null or {} removes them). */
const patchKeySchema = z.strictObject({ limits: limitsSchema.nullable() });

const grantSchema = z.strictObject({
  tokens,
  expires_at: futureTime.nullish(),
});

const usageQuerySchema = z.strictObject({
  key_id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  since: z.coerce.number({ error: 'must be a Unix time in seconds' }).int('must be a Unix time in seconds').nonnegative().optional(),
  until: z.coerce.number({ error: 'must be a Unix time in seconds' }).int('must be a Unix time in seconds').nonnegative().optional(),
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

export function adminApi(options: AdminApiOptions): Router {
  const { store, logger } = options;
  const router = Router();
  router.use(adminToken(options.token));
  router.use(express.json({ limit: '64kb', type: () => true }));

  /** Runs a handler; a store failure becomes 503 rather than a 500. */
  const route =
    (handler: (req: Request, res: Response) => Promise<void>) =>
    async (req: Request, res: Response): Promise<void> => {
      try {
        await handler(req, res);
      } catch (err) {
        logger.error({ err: (err as Error).message, route: req.path }, 'admin request failed on the store');
        sendError(res, STORE_UNAVAILABLE);
      }
    };
  const body = (req: Request): unknown => (req.body === undefined ? {} : req.body);
  const keyNotFound = (id: string) => apiError('not_found', `No key with id '${id}'.`, 'id');

  router.post(
    '/keys',
    route(async (req, res) => {
      const parsed = createKeySchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const input = parsed.data;
      const catalog = options.catalog();
      const unknown = input.models?.findIndex((m) => catalog.get(m) === undefined) ?? -1;
      if (unknown !== -1) {
        return sendError(
          res,
          apiError(
            'invalid_request_error',
            `Invalid 'models[${unknown}]': '${input.models![unknown]}' is not a served model.`,
            `models[${unknown}]`,
          ),
        );
      }
      const secret = generateKey();
      const created = await store.createAccount({
        email: null,
        name: input.name ?? '',
        passwordHash: null,
        role: 'member',
        status: 'active',
      });
      if (created.kind !== 'created') throw new Error('an account without an email cannot clash');
      const accountId = created.account.id;
      const record = await store.createKey(accountId, {
        hash: secret.hash,
        prefix: secret.prefix,
        name: input.name ?? '',
        expiresAt: input.expires_at ?? null,
        models: input.models ? [...new Set(input.models)] : null,
        limits: hasLimits(input.limits) ? input.limits : null,
      });
      if (!record) throw new Error(`account ${accountId} vanished`);
      if (input.tokens !== undefined) await store.grantPackage(accountId, { tokens: input.tokens, expiresAt: null });
      logger.info({ keyId: record.id, tokens: input.tokens ?? 0 }, 'key created');
      res.status(201).json({ ...keyObject(record), key: secret.secret, balance: input.tokens ?? 0 });
    }),
  );

  router.get(
    '/keys',
    route(async (_req, res) => {
      res.json({ data: (await store.listKeys()).map(keyObject) });
    }),
  );

  router.get(
    '/keys/:id',
    route(async (req, res) => {
      const id = String(req.params.id);
      const state = await store.getKey(id);
      if (!state) return sendError(res, keyNotFound(id));
      res.json(keyDetailObject(state));
    }),
  );

  router.patch(
    '/keys/:id',
    route(async (req, res) => {
      const id = String(req.params.id);
      const parsed = patchKeySchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const limits = parsed.data.limits;
      const record = await store.updateKey(id, { limits: hasLimits(limits) ? limits : null });
      if (!record) return sendError(res, keyNotFound(id));
      logger.info({ keyId: id, limits: record.limits }, 'key limits changed');
      res.json(keyObject(record));
    }),
  );

  router.post(
    '/keys/:id/packages',
    route(async (req, res) => {
      const id = String(req.params.id);
      const parsed = grantSchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const key = await store.getKey(id);
      if (!key) return sendError(res, keyNotFound(id));
      const granted = await store.grantPackage(key.accountId, { tokens: parsed.data.tokens, expiresAt: parsed.data.expires_at ?? null });
      if (granted.kind !== 'granted') return sendError(res, keyNotFound(id));
      const pkg = granted.package;
      logger.info({ keyId: id, packageId: pkg.id, tokens: pkg.tokens }, 'package granted');
      res.status(201).json(packageObject(pkg));
    }),
  );

  router.delete(
    '/keys/:id',
    route(async (req, res) => {
      const id = String(req.params.id);
      if (!(await store.revokeKey(id))) return sendError(res, keyNotFound(id));
      const state = await store.getKey(id);
      logger.info({ keyId: id }, 'key revoked');
      res.json({ id, revoked: true, revoked_at: state?.revokedAt ?? nowSeconds() });
    }),
  );

  router.get(
    '/usage',
    route(async (req, res) => {
      const parsed = usageQuerySchema.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const q = parsed.data;
      if (q.after !== undefined && q.key_id === undefined) {
        return sendError(
          res,
          apiError('invalid_request_error', "Invalid 'after': a cursor belongs to one key's ledger; give key_id too.", 'after'),
        );
      }
      const records = await store.usage({
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
