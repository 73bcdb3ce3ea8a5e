/**
 * The mountable parts, built from one set of services: the OpenAI-compatible API, the admin API, health checks and
 * metrics. Each router answers only its own routes and handles its own errors, so it can sit in a host's app beside
 * the host's routes without touching them; createApp composes them into the standalone server.
 */
import { Router, type RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import { adminToken } from './admin/admin-token';
import { operatorApi } from './admin/operator-api';
import { consoleRoutes } from './console/console-routes';
import { securityHeaders } from './console/security-headers';
import { consoleApi } from './console-api/console-api';
import { signedInAccount } from './console-api/session-auth';
import { Sessions } from './accounts/sessions';
import { stripeClient, stripeSettings } from './products/stripe-checkout';
import { bodyTimeout } from './http/body-timeout';
import { errorHandler } from './http/error-handler';
import { storeGuard, type StoreGuard } from './http/store-guard';
import { metricsHandler } from './observability/metrics-endpoint';
import { healthRouter } from './observability/health-routes';
import { requestLog } from './observability/request-log';
import { isWholeStore, type Store } from './store/ports/store';
import { stripeWebhook } from './payments/stripe-webhook';
import type { MeterDeps } from './meter-deps';
import { openaiRouter } from './openai-router';
import type { RoutedHandler } from './http/handler-chain';

export interface Routers {
  /**
   * `POST /chat/completions`, `/completions`, `/embeddings`, `/responses`, the stored responses (`GET`/`DELETE
   * /responses/{id}`, `GET /responses/{id}/input_items`), `GET /models`, `GET /models/{id}`: mount where the OpenAI API
   * should be (`/v1`).
   */
  openai: Router;
  /**
   * `openai`'s metered routes (`POST /chat/completions` …) by their path under it: the very handlers its router runs,
   * for a dispatch ahead of Express's router (createApp's, http/direct-routes.ts); none with a host's `authenticate`,
   * which is always handed Express's request.
   */
  meteredRoutes: ReadonlyMap<string, RoutedHandler>;
  /**
   * The admin API (accounts, keys, packages, products, codes, usage); passes every request on without `adminToken`
   * (and beside a serving store, as `console` and `webhooks` do).
   */
  admin: Router;
  /**
   * The console, mounted at `/console`: the browser app, the public model page (`/models`) and its JSON API under
   * `/api` (sessions, keys, usage, product center).
   */
  console: Router;
  /** Payment webhooks (`POST /stripe` when Stripe is configured, else nothing); mount at `/webhooks`. */
  webhooks: Router;
  /** `GET /healthz` (alive) and `GET /readyz` (store reachable, not draining). */
  health: Router;
  /** Serves the metrics registry in Prometheus text format. */
  metrics: RequestHandler;
  /** The metrics registry, to merge into the host's own. */
  registry: Registry;
}

export function createRouters(deps: MeterDeps): Routers {
  const whole = isWholeStore(deps.store) ? deps.store : undefined;
  const guard = storeGuard(deps.logger);
  const operator = whole && operatorRouter(deps, whole, guard);
  const settings = stripeSettings(deps.config);
  const stripe = settings ? stripeClient(settings) : undefined;
  const openai = openaiRouter(deps, whole, guard);
  return {
    openai: openai.router,
    meteredRoutes: openai.metered,
    admin: operator ? adminRouter(deps, operator) : Router(),
    console: whole && operator ? consoleRouter(deps, { store: whole, guard, operator, stripe }) : Router(),
    webhooks: whole ? webhooksRouter(deps, whole, guard, stripe, settings?.webhookSecret) : Router(),
    health: healthRouter(deps),
    metrics: metricsHandler(deps.metrics),
    registry: deps.metrics.registry,
  };
}

/**
 * The operator's one router (with a whole store): it checks no credential itself; the admin router mounts it behind
 * ADMIN_TOKEN and the console behind a session of role admin, so both reach the very same handlers.
 */
function operatorRouter(deps: MeterDeps, store: Store, guard: StoreGuard): Router {
  const { commerce, webhookStore, catalog, logger, reloadModels, ledgerStatus } = deps;
  const maxKeysPerAccount = deps.config.maxKeysPerAccount;
  const webhooks = { store: webhookStore, outbox: store };
  const upstreams = () => deps.pools.states(catalog());
  return operatorApi({ store, commerce, webhooks, catalog, logger, guard, reloadModels, maxKeysPerAccount, upstreams, ledgerStatus });
}

/** The operator's router behind ADMIN_TOKEN, for the CLI and scripts; without a token, nothing. */
function adminRouter(deps: MeterDeps, operator: Router): Router {
  const router = Router();
  const token = deps.config.adminToken;
  if (!token) return router;
  const { logger } = deps;
  router.use(requestLog({ logger, metrics: deps.metrics, logPayloads: false, completions: false }));
  // Every request that reaches this router is the admin API's (unknown routes included): all get the body deadline.
  router.use(bodyTimeout(deps.config.bodyTimeoutSeconds * 1000), adminToken(token), operator);
  router.use(errorHandler(logger));
  return router;
}

interface ConsoleParts {
  store: Store;
  guard: StoreGuard;
  /** The operator's router, for admin sessions under /api/admin. */
  operator: Router;
  stripe: ReturnType<typeof stripeClient> | undefined;
}

function consoleRouter(deps: MeterDeps, parts: ConsoleParts): Router {
  const { config, logger } = deps;
  const { store, guard, operator, stripe } = parts;
  const sessionIdleMs = config.sessionIdleHours * 3_600_000;
  const sessionMaxMs = config.sessionMaxHours * 3_600_000;
  const router = Router();
  router.use(
    '/api',
    requestLog({ logger, metrics: deps.metrics, logPayloads: false, completions: false }),
    securityHeaders,
    bodyTimeout(config.bodyTimeoutSeconds * 1000),
    consoleApi({
      store,
      sessions: deps.sessions,
      commerce: deps.commerce,
      catalog: deps.catalog,
      logger,
      guard,
      registration: config.accountRegistration,
      trial:
        config.signupTokens === undefined ? undefined : { tokens: config.signupTokens, validDays: config.signupTokensValidDays ?? null },
      sessionIdleMs,
      sessionMaxMs,
      loginMaxFailures: config.loginMaxFailures,
      loginFailureWindowMs: config.loginFailureWindowMinutes * 60_000,
      registrationsPerHour: config.registrationsPerHour,
      maxKeysPerAccount: config.maxKeysPerAccount,
      stripe,
      operator,
    }),
    errorHandler(logger),
  );
  const signedIn = signedInAccount({ sessions: new Sessions(deps.sessions, sessionIdleMs, sessionMaxMs), store });
  router.use(consoleRoutes({ catalog: deps.catalog, webDir: deps.webDir, signedIn }));
  return router;
}

function webhooksRouter(
  deps: MeterDeps,
  store: Store,
  guard: StoreGuard,
  stripe: ReturnType<typeof stripeClient> | undefined,
  webhookSecret: string | undefined,
): Router {
  const router = Router();
  const { logger } = deps;
  if (!stripe || !webhookSecret) return router;
  router.use(
    '/stripe',
    requestLog({ logger, metrics: deps.metrics, logPayloads: false, completions: false }),
    bodyTimeout(deps.config.bodyTimeoutSeconds * 1000),
    stripeWebhook({ stripe, webhookSecret, store, commerce: deps.commerce, logger, guard }),
    errorHandler(logger),
  );
  return router;
}
