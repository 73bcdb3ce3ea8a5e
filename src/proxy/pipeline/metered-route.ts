/**
 * The metered pipeline after authentication, one handler per endpoint: validate the body → resolve the model → plan
 * (prompt bound, output allowance) → reserve → forward (forward.ts: the pool chooses a server, retries, falls back).
 * Everything after the answer (relay, usage tap, settlement) belongs to the Exchange; the endpoint supplies what differs.
 */
import type { RoutedRequest, RoutedResponse } from '../../http/handler-chain';
import { ENDPOINT_PATHS } from '../../catalog/endpoints';
import type { Catalog, Model } from '../../catalog/models';
import { apiError, sendError, STORE_UNAVAILABLE, type ApiError } from '../../http/errors';
import type { UpstreamHeaders } from '../../http/http-headers';
import { callerOf, requestFacts, routed, servedBy } from '../../http/request-context';
import type { Meter } from '../../metering/metering';
import type { TokenCounter } from '../../metering/prompt-counter';
import type { PromptMeasure } from '../../metering/prompt-measure';
import type { Logger } from '../../observability/logger';
import type { Metrics } from '../../observability/metrics';
import type { Pools } from '../../upstreams/pools';
import type { ExchangeDeps } from '../exchange-context';
import { NOTHING_CARRIED, type Endpoint } from './endpoint';
import { forward, unserializable, type Route } from './forward';
import { planRequest, type Plan } from './plan';
import { reserve } from './reserve';

export interface MeteredRouteOptions {
  /** The current catalog (a function, so a reload takes effect for the next request). */
  catalog: () => Catalog;
  meter: Meter;
  /** Counts long prompts off the event loop. */
  counter: TokenCounter;
  /** The upstream pools: each model's servers, balanced, retried and failed over (src/upstreams/). */
  pools: Pools;
  /** The headers a request carries upstream. */
  upstreamHeaders: UpstreamHeaders;
  logger: Logger;
  metrics: Metrics;
  upstreamResponseLimit: number;
  /** The process is shutting down: a stream whose client left is not read on (upstream-drain.ts). */
  shuttingDown: () => boolean;
}

/** The model by name, if it serves this endpoint; else the refusal naming both. */
function resolveModel(catalog: Catalog, name: string, endpoint: Endpoint<unknown>): Model | ApiError {
  const model = catalog.get(name);
  if (!model) return apiError('model_not_found', `The model '${name}' does not exist or is not served here.`, 'model');
  if (model.endpoints.has(endpoint.name)) return model;
  const served = [...model.endpoints].map((e) => `/v1${ENDPOINT_PATHS[e]}`).join(', ');
  return apiError(
    'invalid_request_error',
    `The model '${model.id}' does not serve /v1${ENDPOINT_PATHS[endpoint.name]}; it serves ${served}.`,
    'model',
  );
}

export function meteredRoute<R>(endpoint: Endpoint<R>, options: MeteredRouteOptions) {
  const { meter, counter, pools, logger, metrics } = options;
  const exchangeDeps: ExchangeDeps = {
    meter,
    logger,
    metrics,
    upstreamResponseLimit: options.upstreamResponseLimit,
    shuttingDown: options.shuttingDown,
    count: (texts) => counter.count(texts),
  };
  const path = ENDPOINT_PATHS[endpoint.name];
  const upstreamHeaders = options.upstreamHeaders;
  const route: Route<R> = { endpoint, exchangeDeps, path, meter, counter, pools, catalog: options.catalog, upstreamHeaders, metrics };

  return async function meteredHandler(req: RoutedRequest, res: RoutedResponse): Promise<void> {
    // Authentication's one product: who is calling.
    const { accountId, keyId } = callerOf(res);
    const requestId = requestFacts(res).requestId;
    const validated = endpoint.validate(req.body);
    if (!validated.ok) return sendError(res, validated.error);
    const request = validated.request;
    const stream = endpoint.stream(request);
    routed(res, endpoint.name, stream);

    const model = resolveModel(options.catalog(), endpoint.modelName(request), endpoint as Endpoint<unknown>);
    if ('code' in model) return sendError(res, model);
    servedBy(res, model.id);
    const refusal = endpoint.unsupported(request, model);
    if (refusal) return sendError(res, refusal);
    let carried = NOTHING_CARRIED;
    if (endpoint.prepare) {
      const prepared = await endpoint.prepare(request, accountId, model).catch((err: Error) => {
        logger.error({ requestId, err: err.message }, 'store unreachable while checking stored state');
        return STORE_UNAVAILABLE;
      });
      if ('code' in prepared) return sendError(res, prepared);
      carried = prepared;
    }
    let planned: Plan | ApiError | Promise<Plan | ApiError>;
    try {
      const prompt: PromptMeasure = endpoint.prompt(request, carried);
      planned = planRequest(endpoint, request, model, prompt, counter);
    } catch (err) {
      return sendError(res, unserializable(err));
    }
    if (planned instanceof Promise) planned = await planned;
    if ('code' in planned) return sendError(res, planned);
    if (!meter.accepting()) return sendError(res, STORE_UNAVAILABLE);

    const who = { accountId, keyId, requestId };
    const reserved = await reserve({ meter, metrics, logger, counter }, who, model, planned, endpoint.promptWords.field);
    if (reserved.kind === 'refused') return sendError(res, reserved.error, reserved.headers);
    if (reserved.headers) for (const name in reserved.headers) res.setHeader(name, reserved.headers[name]);

    await forward(route, req, res, request, { accountId, keyId, requestId, model, planned, reserved, stream });
  };
}
