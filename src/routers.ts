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
import type { CommerceStore } from './store/ports/commerce-store';
import type { WebhookStore } from './store/ports/webhook-store';
import type { SessionStore } from './store/ports/session-store';
import type { ResponseOwners } from './store/ports/response-owners';
import type { Catalog } from './catalog/models';
import type { Authenticate } from './config/option-types';
import type { MeterConfig } from './config/options';
import { bearerAuth } from './http/auth';
import { bodyTimeout } from './http/body-timeout';
import { liveCredential } from './http/live-credential';
import { errorHandler } from './http/error-handler';
import { apiError, sendError } from './http/errors';
import { hostAuth } from './http/host-auth';
import { upstreamHeaders } from './http/http-headers';
import { jsonBody } from './http/json-body';
import { storeGuard, type StoreGuard } from './http/store-guard';
import type { Meter } from './metering/metering';
import type { Logger } from './observability/logger';
import type { Metrics } from './observability/metrics';
import { metricsHandler } from './observability/metrics-endpoint';
import { healthRouter } from './observability/health-routes';
import { requestLog } from './observability/request-log';
import { ENDPOINT_PATHS, type EndpointName } from './catalog/endpoints';
import { chatEndpoint } from './proxy/endpoints/chat';
import { completionsEndpoint } from './proxy/endpoints/completions';
import { embeddingsEndpoint } from './proxy/endpoints/embeddings';
import { responsesEndpoint } from './proxy/endpoints/responses';
import { rerankEndpoint, scoreEndpoint } from './proxy/endpoints/rerank';
import { mountMessages } from './proxy/routes/messages-routes';
import { storedResponses } from './proxy/routes/stored-responses';
import type { AnyEndpoint } from './proxy/pipeline/endpoint';
import { meteredRoute } from './proxy/pipeline/metered-route';
import { modelsApi } from './proxy/routes/models-api';
import type { Pools } from './upstreams/pools';
import type { TokenCounter } from './metering/prompt-counter';
import { isWholeStore, type ServingStore, type Store } from './store/ports/store';
import type { LedgerStatus } from './ledger-archive/ledger-status';
import { stripeWebhook } from './payments/stripe-webhook';

/** The services the routers share: built once, passed in. */
export interface MeterDeps {
  config: MeterConfig;
  /**
   * A whole Store, or a host's ServingStore (metering and key lookup alone): beside that, the admin API, the console
   * and the webhooks, which manage accounts, keys and money, pass every request on.
   */
  store: ServingStore;
  /** The console's sessions and failed-login windows. */
  sessions: SessionStore;
  /** The product center's products and redemption codes. */
  commerce: CommerceStore;
  /** Which account owns each stored response (the Responses API). */
  responses: ResponseOwners;
  /** Webhook endpoints and their deliveries (the operator's routes; delivery is the worker's). */
  webhookStore: WebhookStore;
  /** The current catalog; a function so the models file can be reloaded. */
  catalog: () => Catalog;
  meter: Meter;
  /** Counts long prompts off the event loop (closed with the app). */
  counter: TokenCounter;
  /** The upstream pools: balanced, health-checked, retried and failed over (src/upstreams/). */
  pools: Pools;
  logger: Logger;
  metrics: Metrics;
  /** Reloads the models file (the admin reload route); resolves to the number of models. */
  reloadModels?: () => Promise<number>;
  /** Set `draining` on shutdown: /readyz turns 503 and new completions are refused. */
  lifecycle: { draining: boolean };
  /** The built browser console (index.html and assets/); unset or missing: its pages say it is not built. */
  webDir?: string;
  /** The host's authentication instead of tokenmeter's bearer keys. */
  authenticate?: Authenticate;
  /** The ledger archive's state (GET /admin/ledger); unset: the route answers as without an archive. */
  ledgerStatus?: () => Promise<LedgerStatus>;
}

export interface Routers {
  /**
   * `POST /chat/completions`, `/completions`, `/embeddings`, `/responses`, the stored responses (`GET`/`DELETE
   * /responses/{id}`, `GET /responses/{id}/input_items`), `GET /models`, `GET /models/{id}`: mount where the OpenAI API
   * should be (`/v1`).
   */
  openai: Router;
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
  return {
    openai: openaiRouter(deps, whole, guard),
    admin: operator ? adminRouter(deps, operator) : Router(),
    console: whole && operator ? consoleRouter(deps, { store: whole, guard, operator, stripe }) : Router(),
    webhooks: whole ? webhooksRouter(deps, whole, guard, stripe, settings?.webhookSecret) : Router(),
    health: healthRouter(deps),
    metrics: metricsHandler(deps.metrics),
    registry: deps.metrics.registry,
  };
}

function openaiRouter(deps: MeterDeps, whole: Store | undefined, guard: StoreGuard): Router {
  const { config, store, logger, lifecycle } = deps;
  const router = Router();
  const log = (completions: boolean, endpoint?: EndpointName) =>
    requestLog({ logger, metrics: deps.metrics, logPayloads: config.logPayloads, completions, endpoint });
  const authenticate = deps.authenticate ? hostAuth(deps.authenticate, logger) : bearerAuth({ store, logger });
  const deadline = bodyTimeout(config.bodyTimeoutSeconds * 1000);
  const refuseWhileDraining: RequestHandler = (_req, res, next) => {
    if (!lifecycle.draining) return next();
    res.setHeader('connection', 'close');
    sendError(res, apiError('shutting_down', 'This instance is shutting down; retry on another.'));
  };

  const headersUpstream = upstreamHeaders(config.upstreamForwardHeaders);
  const routeOptions = {
    catalog: deps.catalog,
    meter: deps.meter,
    counter: deps.counter,
    pools: deps.pools,
    upstreamHeaders: headersUpstream,
    logger,
    metrics: deps.metrics,
    upstreamResponseLimit: config.upstreamResponseLimit,
    shuttingDown: () => lifecycle.draining,
  };
  // The chat route first: it is the hot path, and every layer before it is tried on every request.
  const endpoints: AnyEndpoint[] = [chatEndpoint, completionsEndpoint, embeddingsEndpoint, responsesEndpoint(deps.responses, logger)];
  endpoints.push(rerankEndpoint, scoreEndpoint);
  for (const endpoint of endpoints) {
    const path = ENDPOINT_PATHS[endpoint.name];
    router.post(
      path,
      log(true, endpoint.name),
      deadline,
      refuseWhileDraining,
      authenticate,
      jsonBody(config.bodyLimit),
      meteredRoute(endpoint, routeOptions),
    );
    router.all(path, (_req, res) => {
      sendError(res, apiError('method_not_allowed', `Use POST for /v1${path}.`), { allow: 'POST' });
    });
  }
  // The routes that reserve nothing check the credential as the reserve step does: a live key of an active account.
  const live = liveCredential({ keys: store, accounts: whole, guard });
  mountMessages(router, {
    before: (metered) => [log(metered, metered ? 'messages' : undefined), deadline, refuseWhileDraining],
    hostAuth: deps.authenticate && authenticate,
    live,
    body: jsonBody(config.bodyLimit),
    store,
    logger,
    forward: config.upstreamForwardHeaders ?? [],
    route: routeOptions,
  });
  // The Responses API's stored state: the account's own responses only.
  const stored = storedResponses({
    catalog: deps.catalog,
    owners: deps.responses,
    pools: deps.pools,
    upstreamHeaders: headersUpstream,
    logger,
    responseLimit: config.upstreamResponseLimit,
  });
  router.use('/responses', log(false), deadline, refuseWhileDraining, authenticate, live, stored);
  router.use('/models', log(false), deadline, authenticate, live, modelsApi({ catalog: deps.catalog }));
  router.use(errorHandler(logger));
  return router;
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
