/**
 * The OpenAI-compatible API's router (mounted at `/v1`): the metered routes, each one chain of handlers (log, body
 * deadline, drain, authenticate, body, the metered pipeline), also handed out by path for a dispatch ahead of
 * Express's router; the Anthropic Messages routes; the stored responses; the model list.
 */
import { Router } from 'express';
import { ENDPOINT_PATHS, type EndpointName } from './catalog/endpoints';
import { bearerAuth } from './http/auth';
import { bodyTimeout } from './http/body-timeout';
import { errorHandler } from './http/error-handler';
import { apiError, sendError } from './http/errors';
import { handlerChain, type RoutedHandler } from './http/handler-chain';
import { hostAuth } from './http/host-auth';
import { upstreamHeaders } from './http/http-headers';
import { jsonBody } from './http/json-body';
import { liveCredential } from './http/live-credential';
import type { StoreGuard } from './http/store-guard';
import type { MeterDeps } from './meter-deps';
import { requestLog } from './observability/request-log';
import { chatEndpoint } from './proxy/endpoints/chat';
import { completionsEndpoint } from './proxy/endpoints/completions';
import { embeddingsEndpoint } from './proxy/endpoints/embeddings';
import { responsesEndpoint } from './proxy/endpoints/responses';
import { rerankEndpoint, scoreEndpoint } from './proxy/endpoints/rerank';
import type { AnyEndpoint } from './proxy/pipeline/endpoint';
import { meteredRoute } from './proxy/pipeline/metered-route';
import { mountMessages } from './proxy/routes/messages-routes';
import { modelsApi } from './proxy/routes/models-api';
import { storedResponses } from './proxy/routes/stored-responses';
import type { Store } from './store/ports/store';

export interface OpenaiRouter {
  router: Router;
  /** The metered routes by their path under the router (`/chat/completions`); none when the host authenticates. */
  metered: ReadonlyMap<string, RoutedHandler>;
}

export function openaiRouter(deps: MeterDeps, whole: Store | undefined, guard: StoreGuard): OpenaiRouter {
  const { config, store, logger, lifecycle } = deps;
  const router = Router();
  const metered = new Map<string, RoutedHandler>();
  // Dispatched without Express, a route's handlers get node's request: a host's own authenticate gets Express's, always.
  const handOut = deps.authenticate === undefined;
  const log = (completions: boolean, endpoint?: EndpointName) =>
    requestLog({ logger, metrics: deps.metrics, logPayloads: config.logPayloads, completions, endpoint });
  const authenticate = deps.authenticate ? hostAuth(deps.authenticate, logger) : bearerAuth({ store, logger });
  const deadline = bodyTimeout(config.bodyTimeoutSeconds * 1000);
  const refuseWhileDraining: RoutedHandler = (_req, res, next) => {
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
    const route = handlerChain([
      log(true, endpoint.name),
      deadline,
      refuseWhileDraining,
      authenticate,
      jsonBody(config.bodyLimit),
      meteredRoute(endpoint, routeOptions),
    ]);
    if (handOut) metered.set(path, route);
    router.post(path, route);
    router.all(path, (_req, res) => {
      sendError(res, apiError('method_not_allowed', `Use POST for /v1${path}.`), { allow: 'POST' });
    });
  }
  // The routes that reserve nothing check the credential as the reserve step does: a live key of an active account.
  const live = liveCredential({ keys: store, accounts: whole, guard });
  const messages = mountMessages(router, {
    before: (metered) => [log(metered, metered ? 'messages' : undefined), deadline, refuseWhileDraining],
    hostAuth: deps.authenticate && authenticate,
    live,
    body: jsonBody(config.bodyLimit),
    store,
    logger,
    forward: config.upstreamForwardHeaders ?? [],
    route: routeOptions,
  });
  if (handOut) metered.set(messages.path, messages.route);
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
  return { router, metered };
}
