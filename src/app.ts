/**
 * The standalone server's request listener: tokenmeter's routers at their usual paths in an Express app, a 404 and an
 * error handler, with the metered routes dispatched ahead of Express's router (http/direct-routes.ts).
 */
import type { RequestListener } from 'node:http';
import express, { type RequestHandler } from 'express';
import { favicon } from './console/favicon';
import { securityHeaders } from './console/security-headers';
import { bodyTimeout } from './http/body-timeout';
import { directRoutes } from './http/direct-routes';
import { errorHandler } from './http/error-handler';
import { apiError, sendError } from './http/errors';
import type { Logger } from './observability/logger';
import type { ServingStore } from './store/ports/store';
import type { Tokenmeter } from './tokenmeter';

export interface AppOptions {
  logger: Logger;
  /** Serve /metrics here too (off when METRICS_PORT serves it apart). */
  metrics: boolean;
  /** Serves /metrics instead of the meter's own registry (a worker's: the whole group's). */
  metricsHandler?: RequestHandler;
  /** Express's `trust proxy`: who the client is and whether it came over https (the console's throttle and cookie). */
  trustProxy: boolean | number | string;
  /** BODY_TIMEOUT_SECONDS for every route of the app, in ms (the routers time their own routes in a host app too). */
  bodyTimeoutMs: number;
}

/** Takes a Tokenmeter over any store: beside a serving store its admin, console and webhooks routers pass requests on. */
export function createApp(meter: Tokenmeter<ServingStore>, options: AppOptions): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy);
  // First, so a body trickled to any route (a 404, /healthz) is cut off too; the routers then see it timed already.
  app.use(bodyTimeout(options.bodyTimeoutMs));

  // The OpenAI API first: its completions route is the hot path, and every layer before it is tried on every request.
  app.use('/v1', meter.openai);
  // vLLM serves rerank and score at the root too (/v2/rerank: the Cohere-style path, the same body and answer):
  // the same metered routes, under the paths clients of vLLM call.
  app.all(['/rerank', '/v2/rerank', '/score'], (req, res, next) => {
    req.url = req.path.endsWith('/score') ? '/score' : '/rerank';
    meter.openai(req, res, next);
  });
  app.use((_req, res, next) => {
    if (meter.draining) res.setHeader('connection', 'close');
    next();
  });
  if (options.metrics) app.get('/metrics', options.metricsHandler ?? meter.metrics);
  app.use(meter.health);
  app.use('/admin', meter.admin);
  app.get('/', securityHeaders, (_req, res) => res.redirect(302, '/console/'));
  // Browsers ask for it on every page of the origin, whatever the page links.
  app.get('/favicon.ico', securityHeaders, favicon);
  app.use('/console', meter.console);
  app.use('/webhooks', meter.webhooks);

  app.use((req, res) => {
    sendError(res, apiError('not_found', `Unknown route: ${req.method} ${req.path}`));
  });
  const onError = errorHandler(options.logger);
  app.use(onError);
  return directRoutes(app, { mount: '/v1', routes: meter.meteredRoutes, onError });
}
