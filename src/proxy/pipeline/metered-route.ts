/**
 * The metered pipeline after authentication, one handler per endpoint: validate the body → resolve the model → plan
 * (prompt bound, output allowance) → reserve → forward the rewritten body. Everything after the reservation (relay,
 * usage tap, settlement) belongs to the Exchange; the endpoint's adapter supplies what differs.
 */
import type { NextFunction, Request, Response } from 'express';
import { ENDPOINT_PATHS } from '../../catalog/endpoints';
import type { Catalog, Model } from '../../catalog/models';
import { apiError, sendError, STORE_UNAVAILABLE, type ApiError } from '../../http/errors';
import type { UpstreamHeaders } from '../../http/http-headers';
import type { Meter } from '../../metering/metering';
import { countOutput } from '../../metering/output-count';
import { countPrompt, type CountFailure, type TokenCounter } from '../../metering/prompt-counter';
import type { PromptMeasure } from '../../metering/prompt-measure';
import type { Logger } from '../../observability/logger';
import type { Metrics } from '../../observability/metrics';
import { requestFacts, type RequestFacts } from '../../observability/request-log';
import { Exchange } from '../exchange';
import type { ExchangeDeps } from '../exchange-context';
import { resender, type Upstreams } from '../upstream-proxy';
import type { Endpoint } from './endpoint';
import { planRequest, type Plan } from './plan';
import { reserve, type Reserved, type Who } from './reserve';

export interface MeteredRouteOptions {
  /** The current catalog (a function, so a reload takes effect for the next request). */
  catalog: () => Catalog;
  meter: Meter;
  /** Counts long prompts off the event loop. */
  counter: TokenCounter;
  upstreams: Upstreams;
  /** The headers a request carries upstream. */
  upstreamHeaders: UpstreamHeaders;
  logger: Logger;
  metrics: Metrics;
  upstreamResponseLimit: number;
  upstreamConnectTimeoutMs: number;
  upstreamTimeoutMs: number;
  /** The process is shutting down: a stream whose client left is not read on (upstream-drain.ts). */
  shuttingDown: () => boolean;
}

/** JSON.parse accepts any depth, JSON.stringify does not: a body nested too deeply to re-serialize is the client's error. */
function unserializable(err: unknown): ApiError {
  if (!(err instanceof RangeError)) throw err;
  return apiError('invalid_request_error', 'The request body is nested too deeply.');
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

/** What every request of one metered route shares: built once. */
interface Route<R> {
  endpoint: Endpoint<R>;
  exchangeDeps: ExchangeDeps;
  path: string;
  meter: Meter;
  counter: TokenCounter;
  upstreams: Upstreams;
  upstreamHeaders: UpstreamHeaders;
}

/** A request past its reservation, on its way upstream. */
interface Reserving extends Who {
  model: Model;
  planned: Plan;
  reserved: Reserved;
  facts: RequestFacts;
}

export function meteredRoute<R>(endpoint: Endpoint<R>, options: MeteredRouteOptions) {
  const { meter, counter, upstreams, logger, metrics } = options;
  const exchangeDeps: ExchangeDeps = {
    meter,
    logger,
    metrics,
    upstreamResponseLimit: options.upstreamResponseLimit,
    upstreamConnectTimeoutMs: options.upstreamConnectTimeoutMs,
    upstreamTimeoutMs: options.upstreamTimeoutMs,
    shuttingDown: options.shuttingDown,
    count: (texts) => counter.count(texts),
  };
  const path = ENDPOINT_PATHS[endpoint.name];
  const route: Route<R> = { endpoint, exchangeDeps, path, meter, counter, upstreams, upstreamHeaders: options.upstreamHeaders };

  return async function meteredHandler(req: Request, res: Response, next: NextFunction): Promise<void> {
    const facts = requestFacts(res);
    facts.endpoint = endpoint.name;
    const keyId = facts.keyId ?? null;
    const accountId = facts.accountId as string;
    const requestId = facts.requestId;
    const validated = endpoint.validate(req.body);
    if (!validated.ok) return sendError(res, validated.error);
    const request = validated.request;
    const stream = endpoint.stream(request);
    facts.stream = stream;

    const model = resolveModel(options.catalog(), endpoint.modelName(request), endpoint as Endpoint<unknown>);
    if ('code' in model) return sendError(res, model);
    facts.model = model;
    const refusal = endpoint.unsupported(request, model);
    if (refusal) return sendError(res, refusal);
    let carried = 0;
    if (endpoint.prepare) {
      const prepared = await endpoint.prepare(request, accountId, model).catch((err: Error) => {
        logger.error({ requestId, err: err.message }, 'store unreachable while checking stored state');
        return STORE_UNAVAILABLE;
      });
      if (typeof prepared !== 'number') return sendError(res, prepared);
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

    await forward(route, req, res, next, request, { accountId, keyId, requestId, model, planned, reserved, facts });
  };
}

/** The prompt's tokens at settlement when the upstream reported none: counted, else its bound (never less). */
function settledPrompt<R>(route: Route<R>, prompt: PromptMeasure, requestId: string): number | Promise<number> {
  const tokens = (failure: CountFailure | undefined) => {
    if (failure) route.exchangeDeps.logger.warn({ requestId, failure }, 'prompt not counted at settlement: its bound is charged');
    return prompt.tokens;
  };
  const failure = countPrompt(route.counter, prompt);
  return failure instanceof Promise ? failure.then(tokens) : tokens(failure);
}

/** Sends the rewritten body upstream; from here the Exchange answers the client and settles. */
async function forward<R>(route: Route<R>, req: Request, res: Response, next: NextFunction, request: R, r: Reserving): Promise<void> {
  const { endpoint, exchangeDeps, path, meter, upstreams, upstreamHeaders } = route;
  const { accountId, keyId, requestId, model, planned, reserved } = r;
  // The upstream sees its own model name, an output cap the reservation covers, and a request for stream usage.
  // Written as the string it is: the socket encodes it once, with no Buffer copy of the body in between.
  let body: string;
  let hideUsage: boolean;
  try {
    const upstreamBody = endpoint.upstreamBody(request, model, reserved.allowance);
    hideUsage = upstreamBody.hideUsage;
    body = JSON.stringify(upstreamBody.body);
  } catch (err) {
    meter.release(accountId, requestId);
    reserved.undoModel();
    return sendError(res, unserializable(err));
  }

  const upstream = upstreams.get(model.upstreamUrl);
  const { answered } = endpoint;
  const echoed = endpoint.echoed?.(request);
  const exchange: Exchange = new Exchange(
    exchangeDeps,
    {
      accountId,
      keyId,
      requestId,
      model,
      endpoint: endpoint.name,
      path,
      stream: r.facts.stream === true,
      hideUsageChunk: hideUsage,
      answer: endpoint.answer,
      echoedChars: echoed?.reduce((n, prompt) => n + prompt.length, 0) ?? 0,
      outputTokens: (answer) => countOutput(exchangeDeps.count, endpoint.answer.outputTexts(answer, echoed)),
      facts: r.facts,
      reservedOutput: reserved.allowance * planned.choices,
      hostedTools: planned.tools,
      promptTokens: () => settledPrompt(route, planned.prompt, requestId),
      lease: meter.hold(accountId, requestId, model),
      resend: resender(upstream, req, res, next),
      onAnswer: answered && ((ids, tokens) => answered.call(endpoint, ids, request, accountId, model, tokens)),
    },
    res,
  );
  req.headers = upstreamHeaders(req, { bodyLength: Buffer.byteLength(body), apiKey: model.upstreamApiKey, requestId });
  // http-proxy pipes the incoming request into the upstream one. Ours was already read and rewritten, so it gets
  // the new body instead, written at once (unlike writing it in the proxyReq event, this cannot race the pipe's end).
  req.pipe = (<T extends NodeJS.WritableStream>(dest: T): T => {
    dest.end(body);
    return dest;
  }) as typeof req.pipe;
  await upstream.send(req, res, next, exchange);
}
