/** Builds the Express app from its dependencies; nothing here reads the environment or holds module state. */
import express, { Router, type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { adminApi } from './admin/admin-api';
import { adminToken } from './admin/admin-token';
import { consoleApi } from './console-api/console-api';
import { operatorBridge } from './console-api/operator-bridge';
import { productAdmin } from './products/product-admin';
import { stripeClient, stripeWebhook } from './products/stripe-checkout';
import type { CommerceStore } from './store/commerce-types';
import type { SessionStore } from './store/session-types';
import { bearerAuth } from './http/auth';
import { chatCompletions } from './proxy/chat-completions';
import { consoleRoutes } from './console/console-routes';
import { securityHeaders } from './console/security-headers';
import type { Config } from './config/config';
import { apiError, sendError } from './http/errors';
import { jsonBody } from './http/json-body';
import { modelsApi } from './catalog/models-api';
import type { Logger } from './observability/logger';
import type { Meter } from './metering/metering';
import { metricsHandler } from './observability/metrics-endpoint';
import type { Metrics } from './observability/metrics';
import { requestLog } from './observability/request-log';
import type { Catalog } from './catalog/models';
import type { Store } from './store/types';
import type { Upstreams } from './proxy/upstream-proxy';

export interface AppDeps {
  config: Config;
  store: Store;
  /** The console's sessions and failed-login windows. */
  sessions: SessionStore;
  /** The product center's products and redemption codes. */
  commerce: CommerceStore;
  /** The current catalog; a function so the models file can be reloaded. */
  catalog: () => Catalog;
  meter: Meter;
  upstreams: Upstreams;
  logger: Logger;
  metrics: Metrics;
  /** Reloads the models file (the admin reload route); resolves to the number of models. */
  reloadModels?: () => Promise<number>;
  /** The built browser console (index.html and assets/); unset: the console pages say it is not built. */
  webDir?: string;
  /** Set `draining` on shutdown: /readyz turns 503 and new completions are refused, connections closed. */
  lifecycle?: { draining: boolean };
}

export function createApp(deps: AppDeps): Express {
  const { config, store, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Who the client is and whether it came over https (the console's throttle and Secure cookie), per TRUST_PROXY.
  app.set('trust proxy', config.trustProxy);

  const lifecycle = deps.lifecycle ?? { draining: false };
  const log = (completions: boolean) => requestLog({ logger, metrics: deps.metrics, logPayloads: config.logPayloads, completions });
  const authenticate = bearerAuth({ store, logger });
  const refuseWhileDraining: RequestHandler = (_req, res, next) => {
    if (!lifecycle.draining) return next();
    res.setHeader('connection', 'close');
    sendError(res, apiError('shutting_down', 'This instance is shutting down; retry on another.'));
  };

  // The completions route first: it is the hot path, and every layer before it is tried on every request.
  app.post(
    '/v1/chat/completions',
    log(true),
    refuseWhileDraining,
    authenticate,
    jsonBody(config.bodyLimit),
    chatCompletions({
      catalog: deps.catalog,
      meter: deps.meter,
      upstreams: deps.upstreams,
      logger,
      metrics: deps.metrics,
      upstreamResponseLimit: config.upstreamResponseLimit,
      upstreamConnectTimeoutMs: config.upstreamConnectTimeoutMs,
      upstreamTimeoutMs: config.upstreamTimeoutMs,
    }),
  );
  app.use((_req, res, next) => {
    if (lifecycle.draining) res.setHeader('connection', 'close');
    next();
  });
  if (config.metricsPort === undefined) app.get('/metrics', metricsHandler(deps.metrics));
  app.use(['/v1/models', '/admin', '/console/api', '/webhooks'], log(false));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (lifecycle.draining) return sendError(res, apiError('shutting_down', 'This instance is shutting down.'));
    try {
      await store.ping();
      res.json({ status: 'ready', store: store.kind });
    } catch {
      sendError(res, apiError('store_unavailable', 'The metering store is not reachable.'));
    }
  });

  app.use('/v1/models', authenticate, modelsApi({ catalog: deps.catalog, store, logger }));
  // The operator's routes (only with ADMIN_TOKEN): the product center's, then the rest of the admin API, which
  // answers unknown routes. An admin session reaches the same router under /console/api/admin.
  let operatorRoutes: Router | undefined;
  if (config.adminToken) {
    const admin = adminApi({ token: config.adminToken, store, catalog: deps.catalog, logger, reloadModels: deps.reloadModels });
    operatorRoutes = Router();
    operatorRoutes.use(productAdmin({ commerce: deps.commerce, logger }), operatorBridge(config.adminToken, admin));
    app.use('/admin', adminToken(config.adminToken), operatorRoutes);
  }
  const stripe = config.stripe ? stripeClient(config.stripe) : undefined;
  if (config.stripe && stripe) {
    app.use('/webhooks/stripe', stripeWebhook({ stripe, webhookSecret: config.stripe.webhookSecret, store, logger }));
  }
  app.use(
    '/console/api',
    consoleApi({
      store,
      sessions: deps.sessions,
      commerce: deps.commerce,
      catalog: deps.catalog,
      logger,
      registration: config.accountRegistration,
      sessionIdleMs: config.sessionIdleMs,
      loginMaxFailures: config.loginMaxFailures,
      loginFailureWindowMs: config.loginFailureWindowMs,
      stripe,
      adminRoutes: operatorRoutes,
    }),
  );

  app.get('/', securityHeaders, (_req, res) => res.redirect(302, '/console/'));
  app.use('/console', consoleRoutes({ catalog: deps.catalog, webDir: deps.webDir }));

  app.all('/v1/chat/completions', (_req, res) => {
    sendError(res, apiError('method_not_allowed', 'Use POST for /v1/chat/completions.'), { allow: 'POST' });
  });

  app.use((req, res) => {
    sendError(res, apiError('not_found', `Unknown route: ${req.method} ${req.path}`));
  });
  app.use(errorHandler(logger));
  return app;
}

/** The one error handler: body-parser's failures become OpenAI-shaped 4xx; anything else a 500 without a stack. */
function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: { type?: string; status?: number; message?: string; stack?: string }, _req, res, _next) => {
    switch (err.type) {
      case 'entity.too.large':
        return sendError(res, apiError('request_too_large', 'The request body is too large.'));
      case 'entity.parse.failed':
        return sendError(res, apiError('invalid_json', 'The request body is not valid JSON.'));
      case 'encoding.invalid_utf8':
        return sendError(res, apiError('invalid_json', 'The request body is not valid UTF-8.'));
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendError(res, apiError('unsupported_media_type', 'Send the body as uncompressed UTF-8 JSON.'));
      case 'entity.decode.failed':
        return sendError(res, apiError('invalid_request_error', 'The request body could not be decoded as its Content-Encoding says.'));
      case 'request.aborted':
      case 'request.size.invalid':
        return sendError(res, apiError('invalid_request_error', 'The request body ended early.'));
    }
    // body-parser's other 4xx (a body that does not decode as its Content-Encoding, say) carry a status, no type.
    if (err.status !== undefined && err.status >= 400 && err.status < 500) {
      return sendError(res, apiError('invalid_request_error', 'The request body could not be read (check its Content-Encoding).'));
    }
    logger.error({ err: err.message, stack: err.stack }, 'unhandled error');
    return sendError(res, apiError('internal_error', 'Internal error.'));
  };
}
