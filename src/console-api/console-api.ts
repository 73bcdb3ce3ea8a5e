/**
 * The self-service API under /console/api: JSON only, cross-site requests refused, a session cookie for everything
 * but registration, login, the session probe and the product list (the models list too needs a session). Operators
 * (role admin) reach the operator's router under /admin here, with their session: the very router /admin serves
 * behind ADMIN_TOKEN, so the console adds no second way to change state, and works whether or not ADMIN_TOKEN is set.
 */
import express, { Router, type Request } from 'express';
import type Stripe from 'stripe';
import { LoginThrottle } from '../accounts/login-throttle';
import { Sessions } from '../accounts/sessions';
import type { Catalog } from '../catalog/models';
import { modelListObject } from '../api';
import { apiError, sendError } from '../http/errors';
import type { StoreGuard } from '../http/store-guard';
import type { Logger } from '../observability/logger';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { SessionStore } from '../store/ports/session-store';
import type { AccountStore } from '../store/ports/account-store';
import type { KeyStore } from '../store/ports/key-store';
import type { UsageLedger } from '../store/ports/usage-ledger';
import type { NewTrial } from '../store/records/account';
import { accountRoutes } from './account-routes';
import { commerceRoutes } from './commerce-routes';
import { keyRoutes } from './key-routes';
import { sameOrigin } from './same-origin';
import { requireAdminRole, requireSession, sessionCheck } from './session-auth';
import { usageRoutes } from './usage-routes';

export interface ConsoleApiOptions {
  store: AccountStore & KeyStore & UsageLedger;
  sessions: SessionStore;
  commerce: CommerceStore;
  catalog: () => Catalog;
  logger: Logger;
  /** The store-failure wrapper every handler runs in. */
  guard: StoreGuard;
  registration: 'open' | 'closed';
  /** The trial package each registration gets (SIGNUP_TOKENS); undefined: none. */
  trial: NewTrial | undefined;
  sessionIdleMs: number;
  sessionMaxMs: number;
  loginMaxFailures: number;
  loginFailureWindowMs: number;
  registrationsPerHour: number;
  maxKeysPerAccount: number;
  stripe: Stripe | undefined;
  /** The operator's router (admin/operator-api.ts), mounted here behind an admin session. */
  operator: Router;
}

export function consoleApi(options: ConsoleApiOptions): Router {
  const { store, logger, guard } = options;
  const sessions = new Sessions(options.sessions, options.sessionIdleMs, options.sessionMaxMs);
  const throttle = new LoginThrottle(options.sessions, {
    maxFailures: options.loginMaxFailures,
    windowMs: options.loginFailureWindowMs,
    registrationsPerHour: options.registrationsPerHour,
  });
  const secure = (req: Request) => req.secure;
  const session = guard(requireSession({ sessions, store, secure }));
  const liveSession = sessionCheck({ sessions, store, secure });

  const router = Router();
  router.use((_req, res, next) => {
    // Account data: never kept by a shared cache or the browser's history.
    res.setHeader('cache-control', 'no-store');
    next();
  });
  router.use(sameOrigin());
  router.use(express.json({ limit: '64kb' }));

  router.use(
    accountRoutes({
      store,
      sessions,
      throttle,
      registration: options.registration,
      trial: options.trial,
      logger,
      guard,
      secure,
      requireSession: session,
      liveSession,
    }),
  );
  router.use(commerceRoutes({ store, commerce: options.commerce, logger, guard, requireSession: session, stripe: options.stripe }));
  router.use('/keys', session, keyRoutes({ store, catalog: options.catalog, logger, guard, maxKeys: options.maxKeysPerAccount }));
  // The models a key may be limited to, for an account holder who has no key yet: what /v1/models lists, unfiltered.
  router.get('/models', session, (_req, res) => {
    res.json(modelListObject(options.catalog().list()));
  });
  router.use('/usage', session, usageRoutes({ store, guard }));
  router.use('/admin', session, requireAdminRole, options.operator);

  router.use((req, res) => sendError(res, apiError('not_found', `Unknown console route: ${req.method} ${req.baseUrl}${req.path}`)));
  return router;
}
