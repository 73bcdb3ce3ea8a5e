/**
 * /admin/accounts: create, list and search (with balances), show (balance, packages, usage, keys), update (name, status, role,
 * password, limits), grant a package, create and list an account's keys.
 */
import { Router } from 'express';
import type { GuardedHandler } from '../http/store-guard';
import {
  accountDetailObject,
  accountKeyRequest,
  accountListItemObject,
  accountListQuery,
  accountObject,
  createAccountRequest,
  grantRequest,
  keyObject,
  packageObject,
  updateAccountRequest,
  type AccountPageObject,
  type AccountShowObject,
  type CreatedAccountObject,
} from '../api';
import { hashPassword } from '../accounts/password';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import { hasLimits } from '../limits/limits';
import type { AccountPatch, AccountState } from '../store/records/account';
import { accountNotFound, BALANCE_LIMIT, body, type AdminContext } from './admin-routes';
import { createKeyResponse } from './keys-routes';

export function accountsRoutes(ctx: AdminContext): Router {
  const { store, logger, guard } = ctx;
  const router = Router();

  router.post('/accounts', guard(createAccount(ctx)));

  router.get(
    '/accounts',
    guard(async (req, res) => {
      const parsed = accountListQuery.safeParse(req.query);
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const { search, after, limit } = parsed.data;
      const page = await store.listAccounts({ search, after, limit: limit + 1 });
      const states = await store.getAccounts(page.slice(0, limit).map((a) => a.id));
      // Accounts are never deleted, so every listed account has a state.
      const data = states.filter((st): st is AccountState => st !== undefined).map(accountListItemObject);
      const answer: AccountPageObject = { data, has_more: page.length > limit };
      res.json(answer);
    }),
  );

  router.get(
    '/accounts/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const state = await store.getAccount(id);
      if (!state) return sendError(res, accountNotFound(id));
      const answer: AccountShowObject = { ...accountDetailObject(state), keys: (await store.listKeys(id)).map(keyObject) };
      res.json(answer);
    }),
  );

  router.patch('/accounts/:id', guard(updateAccount(ctx)));

  router.post(
    '/accounts/:id/packages',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const parsed = grantRequest.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const granted = await store.grantPackage(id, { tokens: parsed.data.tokens, expiresAt: parsed.data.expires_at ?? null });
      if (granted.kind === 'balance_limit') return sendError(res, BALANCE_LIMIT);
      if (granted.kind !== 'granted') return sendError(res, accountNotFound(id));
      logger.info({ accountId: id, packageId: granted.package.id, tokens: granted.package.tokens }, 'package granted');
      res.status(201).json(packageObject(granted.package));
    }),
  );

  router.post(
    '/accounts/:id/keys',
    guard(async (req, res) => {
      const parsed = accountKeyRequest.safeParse(body(req));
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      await createKeyResponse(ctx, res, String(req.params.id), parsed.data);
    }),
  );

  router.get(
    '/accounts/:id/keys',
    guard(async (req, res) => {
      const id = String(req.params.id);
      if (!(await store.getAccount(id))) return sendError(res, accountNotFound(id));
      res.json({ data: (await store.listKeys(id)).map(keyObject) });
    }),
  );

  return router;
}

/** POST /admin/accounts: an account, with a first package when `tokens` is given. */
function createAccount(ctx: AdminContext): GuardedHandler {
  const { store, logger } = ctx;
  return async (req, res) => {
    const parsed = createAccountRequest.safeParse(body(req));
    if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
    const input = parsed.data;
    const created = await store.createAccount({
      email: input.email ?? null,
      name: input.name ?? '',
      passwordHash: input.password !== undefined ? await hashPassword(input.password) : null,
      role: input.role ?? 'member',
      status: input.status ?? 'active',
      limits: hasLimits(input.limits) ? input.limits : null,
      budget: input.budget ?? null,
    });
    if (created.kind === 'email_taken') {
      return sendError(res, apiError('email_taken', 'An account with this email already exists.', 'email'));
    }
    const { account } = created;
    if (input.tokens !== undefined) await store.grantPackage(account.id, { tokens: input.tokens, expiresAt: null });
    logger.info({ accountId: account.id, role: account.role, tokens: input.tokens ?? 0 }, 'account created');
    const answer: CreatedAccountObject = { ...accountObject(account), balance: input.tokens ?? 0 };
    res.status(201).json(answer);
  };
}

/** PATCH /admin/accounts/:id: name, status, role, password, limits, budget; the log names the fields, never their values. */
function updateAccount(ctx: AdminContext): GuardedHandler {
  const { store, logger } = ctx;
  return async (req, res) => {
    const id = String(req.params.id);
    const parsed = updateAccountRequest.safeParse(body(req));
    if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
    const input = parsed.data;
    const patch: AccountPatch = { name: input.name, role: input.role, status: input.status, budget: input.budget };
    if (input.limits !== undefined) patch.limits = hasLimits(input.limits) ? input.limits : null;
    if (input.password !== undefined) patch.passwordHash = input.password === null ? null : await hashPassword(input.password);
    const account = await store.updateAccount(id, patch);
    if (!account) return sendError(res, accountNotFound(id));
    // Which fields changed, never their values: a password must not reach the log, even hashed.
    logger.info({ accountId: id, changed: Object.keys(input) }, 'account updated');
    res.json(accountObject(account));
  };
}
