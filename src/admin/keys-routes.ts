/**
 * /admin/keys: create (in a new account of its own unless `account_id` names one), list, show, change limits, revoke,
 * and grant a package to a key's account, the routes of before accounts kept as they were.
 */
import { Router, type Response } from 'express';
import { z } from 'zod';
import { adminRoute, body, futureTime, grantSchema, keyNotFound, accountNotFound, name, tokens, type AdminContext } from './admin-routes';
import { keyDetailObject, keyObject, packageObject } from './api-objects';
import { apiError, sendError, type ApiError } from '../http/errors';
import { generateKey } from '../http/keys';
import { invalidRequest } from '../http/zod-errors';
import { hasLimits, limitsSchema } from '../limits/limits';

/** What a new key may carry, whichever route creates it. */
export const newKeyFields = {
  name: name.optional(),
  expires_at: futureTime.nullish(),
  models: z
    .array(z.string({ error: 'must be a model id' }), { error: 'must be an array of model ids' })
    .min(1, 'must name at least one model')
    .nullish(),
  limit_tokens: tokens.nullish(),
  /** `{rpm?, tpm?, max_concurrent?}`: the key's own rate and concurrency limits. */
  limits: limitsSchema.nullish(),
};

const createKeySchema = z.strictObject({
  ...newKeyFields,
  account_id: z.string({ error: 'must be an account id' }).min(1).optional(),
  tokens: tokens.optional(),
});

/** What PATCH /admin/keys/:id may change: the limits (null or {} removes them). */
const patchKeySchema = z.strictObject({ limits: limitsSchema.nullable() });

type NewKeyInput = z.infer<z.ZodObject<typeof newKeyFields>>;

/** The first model id the catalog does not serve, as an error; undefined when all are served. */
function unknownModel(ctx: AdminContext, models: string[] | null | undefined): ApiError | undefined {
  const catalog = ctx.catalog();
  const i = models?.findIndex((m) => catalog.get(m) === undefined) ?? -1;
  if (i === -1) return undefined;
  return apiError('invalid_request_error', `Invalid 'models[${i}]': '${models![i]}' is not a served model.`, `models[${i}]`);
}

/**
 * Creates a key in an account and answers 201 with its secret, shown this once. Tokens, when given, go to the account
 * first. Shared by POST /admin/keys and POST /admin/accounts/:id/keys.
 */
export async function createKeyResponse(
  ctx: AdminContext,
  res: Response,
  accountId: string,
  input: NewKeyInput & { tokens?: number },
): Promise<void> {
  const refusal = unknownModel(ctx, input.models);
  if (refusal) return sendError(res, refusal);
  const secret = generateKey();
  const record = await ctx.store.createKey(accountId, {
    hash: secret.hash,
    prefix: secret.prefix,
    name: input.name ?? '',
    expiresAt: input.expires_at ?? null,
    models: input.models ? [...new Set(input.models)] : null,
    limitTokens: input.limit_tokens ?? null,
    limits: hasLimits(input.limits) ? input.limits : null,
  });
  if (!record) return sendError(res, accountNotFound(accountId));
  if (input.tokens !== undefined) await ctx.store.grantPackage(accountId, { tokens: input.tokens, expiresAt: null });
  const state = await ctx.store.getKey(record.id);
  ctx.logger.info({ keyId: record.id, accountId, tokens: input.tokens ?? 0 }, 'key created');
  res.status(201).json({ ...keyObject(record), key: secret.secret, balance: state?.balance ?? 0 });
}

export function keysRoutes(ctx: AdminContext): Router {
  const { store, logger } = ctx;
  const router = Router();
  const route = (handler: Parameters<typeof adminRoute>[1]) => adminRoute(logger, handler);

  router.post(
    '/keys',
    route(async (req, res) => {
      const parsed = createKeySchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const { account_id, ...input } = parsed.data;
      let accountId = account_id;
      if (accountId === undefined) {
        const refusal = unknownModel(ctx, input.models);
        if (refusal) return sendError(res, refusal);
        // A key without an account gets one of its own, as every key had before accounts.
        const created = await store.createAccount({
          email: null,
          name: input.name ?? '',
          passwordHash: null,
          role: 'member',
          status: 'active',
        });
        if (created.kind !== 'created') throw new Error('an account without an email cannot clash');
        accountId = created.account.id;
      }
      await createKeyResponse(ctx, res, accountId, input);
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
      logger.info(
        { keyId: id, accountId: key.accountId, packageId: granted.package.id, tokens: granted.package.tokens },
        'package granted',
      );
      res.status(201).json(packageObject(granted.package));
    }),
  );

  router.delete(
    '/keys/:id',
    route(async (req, res) => {
      const id = String(req.params.id);
      if (!(await store.revokeKey(id))) return sendError(res, keyNotFound(id));
      const state = await store.getKey(id);
      logger.info({ keyId: id }, 'key revoked');
      res.json({ id, revoked: true, revoked_at: state?.revokedAt ?? Math.floor(Date.now() / 1000) });
    }),
  );

  return router;
}
