/**
 * /admin/accounts: create, list and search (with balances), show (balance, packages, usage, keys), update (name, status, role,
 * password, limits), grant a package, create and list an account's keys.
 */
import { Router } from 'express';
import { z } from 'zod';
import { adminRoute, accountNotFound, body, grantSchema, name, tokens, type AdminContext } from './admin-routes';
import { accountDetailObject, accountListObject, accountObject, keyObject, packageObject } from './api-objects';
import { createKeyResponse, newKeyFields } from './keys-routes';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../accounts/password';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import { pageLimit } from '../console-api/schemas';
import type { AccountPatch, AccountState } from '../store/records/account';
import { hasLimits, limitsSchema } from '../limits/limits';

/** Emails are compared lower-cased and trimmed, so "Ada@Example.com " and "ada@example.com" are one account. */
export const emailSchema = z
  .string({ error: 'must be an email address' })
  .trim()
  .toLowerCase()
  .pipe(z.email('must be an email address').max(254, 'must be at most 254 characters'));

export const passwordSchema = z
  .string({ error: 'must be a string' })
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH} characters`);

const role = z.enum(['member', 'admin'], { error: "must be 'member' or 'admin'" });
const status = z.enum(['active', 'disabled'], { error: "must be 'active' or 'disabled'" });

const createAccountSchema = z.strictObject({
  email: emailSchema.nullish(),
  name: name.optional(),
  password: passwordSchema.optional(),
  role: role.optional(),
  status: status.optional(),
  tokens: tokens.optional(),
  /** `{rpm?, tpm?, max_concurrent?}`, shared by all the account's keys. */
  limits: limitsSchema.nullish(),
});

const updateAccountSchema = z.strictObject({
  name: name.optional(),
  password: passwordSchema.nullish(),
  role: role.optional(),
  status: status.optional(),
  /** Replaces the account's limits; null (or {}) removes them. */
  limits: limitsSchema.nullish(),
});

const listSchema = z.strictObject({
  search: z.string().max(254).optional(),
  after: z.string().min(1).optional(),
  limit: pageLimit,
});

const newKeySchema = z.strictObject({ ...newKeyFields, tokens: tokens.optional() });

export function accountsRoutes(ctx: AdminContext): Router {
  const { store, logger } = ctx;
  const router = Router();
  const route = (handler: Parameters<typeof adminRoute>[1]) => adminRoute(logger, handler);

  router.post(
    '/accounts',
    route(async (req, res) => {
      const parsed = createAccountSchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const input = parsed.data;
      const created = await store.createAccount({
        email: input.email ?? null,
        name: input.name ?? '',
        passwordHash: input.password !== undefined ? await hashPassword(input.password) : null,
        role: input.role ?? 'member',
        status: input.status ?? 'active',
        limits: hasLimits(input.limits) ? input.limits : null,
      });
      if (created.kind === 'email_taken') {
        return sendError(res, apiError('email_taken', 'An account with this email already exists.', 'email'));
      }
      const { account } = created;
      if (input.tokens !== undefined) await store.grantPackage(account.id, { tokens: input.tokens, expiresAt: null });
      logger.info({ accountId: account.id, role: account.role, tokens: input.tokens ?? 0 }, 'account created');
      res.status(201).json({ ...accountObject(account), balance: input.tokens ?? 0 });
    }),
  );

  router.get(
    '/accounts',
    route(async (req, res) => {
      const parsed = listSchema.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const { search, after, limit } = parsed.data;
      const page = await store.listAccounts({ search, after, limit: limit + 1 });
      const states = await store.getAccounts(page.slice(0, limit).map((a) => a.id));
      // Accounts are never deleted, so every listed account has a state.
      const data = states.filter((st): st is AccountState => st !== undefined).map(accountListObject);
      res.json({ data, has_more: page.length > limit });
    }),
  );

  router.get(
    '/accounts/:id',
    route(async (req, res) => {
      const id = String(req.params.id);
      const state = await store.getAccount(id);
      if (!state) return sendError(res, accountNotFound(id));
      res.json({ ...accountDetailObject(state), keys: (await store.listKeys(id)).map(keyObject) });
    }),
  );

  router.patch(
    '/accounts/:id',
    route(async (req, res) => {
      const id = String(req.params.id);
      const parsed = updateAccountSchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const input = parsed.data;
      const patch: AccountPatch = { name: input.name, role: input.role, status: input.status };
      if (input.limits !== undefined) patch.limits = hasLimits(input.limits) ? input.limits : null;
      if (input.password !== undefined) patch.passwordHash = input.password === null ? null : await hashPassword(input.password);
      const account = await store.updateAccount(id, patch);
      if (!account) return sendError(res, accountNotFound(id));
      // Which fields changed, never their values: a password must not reach the log, even hashed.
      logger.info({ accountId: id, changed: Object.keys(input) }, 'account updated');
      res.json(accountObject(account));
    }),
  );

  router.post(
    '/accounts/:id/packages',
    route(async (req, res) => {
      const id = String(req.params.id);
      const parsed = grantSchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const granted = await store.grantPackage(id, { tokens: parsed.data.tokens, expiresAt: parsed.data.expires_at ?? null });
      if (granted.kind !== 'granted') return sendError(res, accountNotFound(id));
      logger.info({ accountId: id, packageId: granted.package.id, tokens: granted.package.tokens }, 'package granted');
      res.status(201).json(packageObject(granted.package));
    }),
  );

  router.post(
    '/accounts/:id/keys',
    route(async (req, res) => {
      const parsed = newKeySchema.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      await createKeyResponse(ctx, res, String(req.params.id), parsed.data);
    }),
  );

  router.get(
    '/accounts/:id/keys',
    route(async (req, res) => {
      const id = String(req.params.id);
      if (!(await store.getAccount(id))) return sendError(res, accountNotFound(id));
      res.json({ data: (await store.listKeys(id)).map(keyObject) });
    }),
  );

  return router;
}
