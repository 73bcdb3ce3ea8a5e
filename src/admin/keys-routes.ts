/**
 * /admin/keys: create (in a new account of its own unless `account_id` names one), list, show, change limits, revoke,
 * and grant a package to a key's account, the routes of before accounts kept as they were.
 */
import { Router, type Response } from 'express';
import type { GuardedHandler } from '../http/store-guard';
import type { z } from 'zod';
import {
  accountKeyRequest,
  createKeyRequest,
  grantRequest,
  keyDetailObject,
  keyLimit,
  keyListQuery,
  keyMatches,
  keyObject,
  packageObject,
  patchKeyRequest,
  type CreatedKeyObject,
  type RevokedKeyObject,
} from '../api';
import { unservedModel } from '../catalog/served-models';
import { sendError } from '../http/errors';
import { generateKey } from '../http/keys';
import { invalidRequest } from '../http/zod-errors';
import { hasLimits } from '../limits/limits';
import type { KeyPatch } from '../store/records/key';
import { accountNotFound, BALANCE_LIMIT, body, keyNotFound, type AdminContext } from './admin-routes';

type NewKeyInput = z.output<typeof accountKeyRequest>;

/**
 * Creates a key in an account and answers 201 with its secret, shown this once. Tokens, when given, go to the account
 * first. Shared by POST /admin/keys and POST /admin/accounts/:id/keys.
 */
export async function createKeyResponse(ctx: AdminContext, res: Response, accountId: string, input: NewKeyInput): Promise<void> {
  const refusal = unservedModel(ctx.catalog(), input.models);
  if (refusal) return sendError(res, refusal);
  const secret = generateKey();
  const created = await ctx.store.createKey(accountId, {
    hash: secret.hash,
    prefix: secret.prefix,
    name: input.name ?? '',
    expiresAt: input.expires_at ?? null,
    models: input.models ? [...new Set(input.models)] : null,
    limitTokens: input.limit_tokens ?? null,
    limits: hasLimits(input.limits) ? input.limits : null,
    budget: input.budget ?? null,
    maxKeys: ctx.maxKeysPerAccount,
  });
  if (created.kind === 'key_limit') return sendError(res, keyLimit(created.maxKeys));
  if (created.kind !== 'created') return sendError(res, accountNotFound(accountId));
  const record = created.key;
  if (input.tokens !== undefined) {
    const granted = await ctx.store.grantPackage(accountId, { tokens: input.tokens, expiresAt: null });
    if (granted.kind === 'balance_limit') {
      // Nothing half-made stays usable: the key without its tokens is revoked before the refusal.
      await ctx.store.revokeKey(record.id);
      return sendError(res, BALANCE_LIMIT);
    }
  }
  const state = await ctx.store.getKey(record.id);
  ctx.logger.info({ keyId: record.id, accountId, tokens: input.tokens ?? 0 }, 'key created');
  const answer: CreatedKeyObject = { ...keyObject(record), key: secret.secret, balance: state?.balance ?? 0 };
  res.status(201).json(answer);
}

export function keysRoutes(ctx: AdminContext): Router {
  const { store, logger, guard } = ctx;
  const router = Router();

  router.post('/keys', guard(createKey(ctx)));

  router.get(
    '/keys',
    guard(async (req, res) => {
      const parsed = keyListQuery.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const { search, account_id, limit } = parsed.data;
      const all = await store.listKeys(account_id);
      const keys = search ? all.filter((k) => keyMatches(k, search)) : all;
      res.json({ data: (limit === undefined ? keys : keys.slice(0, limit)).map(keyObject) });
    }),
  );

  router.get(
    '/keys/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const state = await store.getKey(id);
      if (!state) return sendError(res, keyNotFound(id));
      res.json(keyDetailObject(state));
    }),
  );

  router.patch(
    '/keys/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const parsed = patchKeyRequest.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const { limits, budget } = parsed.data;
      const patch: KeyPatch = { budget };
      if (limits !== undefined) patch.limits = hasLimits(limits) ? limits : null;
      const record = await store.updateKey(id, patch);
      if (!record) return sendError(res, keyNotFound(id));
      logger.info(
        { keyId: id, limits: record.limits, budget: record.budget && `${record.budget.tokens}/${record.budget.period}` },
        'key changed',
      );
      res.json(keyObject(record));
    }),
  );

  router.post(
    '/keys/:id/packages',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const parsed = grantRequest.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const key = await store.getKey(id);
      if (!key) return sendError(res, keyNotFound(id));
      const granted = await store.grantPackage(key.accountId, { tokens: parsed.data.tokens, expiresAt: parsed.data.expires_at ?? null });
      if (granted.kind === 'balance_limit') return sendError(res, BALANCE_LIMIT);
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
    guard(async (req, res) => {
      const id = String(req.params.id);
      if (!(await store.revokeKey(id))) return sendError(res, keyNotFound(id));
      const state = await store.getKey(id);
      logger.info({ keyId: id }, 'key revoked');
      const answer: RevokedKeyObject = { id, revoked: true, revoked_at: state?.revokedAt ?? Math.floor(Date.now() / 1000) };
      res.json(answer);
    }),
  );

  return router;
}

/** POST /admin/keys: in the account named, or in a new account of its own. */
function createKey(ctx: AdminContext): GuardedHandler {
  const { store } = ctx;
  return async (req, res) => {
    const parsed = createKeyRequest.safeParse(body(req));
    if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
    const { account_id, ...input } = parsed.data;
    let accountId = account_id;
    if (accountId === undefined) {
      const refusal = unservedModel(ctx.catalog(), input.models);
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
  };
}
