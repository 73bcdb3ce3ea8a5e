/**
 * From the reservation to one answer: the model's pool chooses a server and retries before the first byte; when the
 * pool cannot answer, the model's fallbacks are tried in order, each reserved at its own weights under the same
 * request id (which replaces what the request held), so whatever was tried, one model answers and is charged once.
 */
import type { RoutedRequest, RoutedResponse } from '../../http/handler-chain';
import type { Catalog, Model } from '../../catalog/models';
import { apiError, sendError, type ApiError } from '../../http/errors';
import { SERVED_MODEL_HEADER, type UpstreamHeaders } from '../../http/http-headers';
import { servedBy } from '../../http/request-context';
import type { Meter } from '../../metering/metering';
import { countOutput } from '../../metering/output-count';
import { countInSlices } from '../../metering/sliced-count';
import { countPrompt, type CountFailure, type TokenCounter } from '../../metering/prompt-counter';
import type { PromptMeasure } from '../../metering/prompt-measure';
import type { Metrics } from '../../observability/metrics';
import type { Outgoing } from '../../upstreams/attempt';
import type { PoolOutcome } from '../../upstreams/pool';
import type { Pools } from '../../upstreams/pools';
import { Exchange } from '../exchange';
import type { ExchangeDeps } from '../exchange-context';
import type { Endpoint } from './endpoint';
import { planRequest, type Plan } from './plan';
import { reserve, type Reserved, type Who } from './reserve';

/** What every request of one metered route shares: built once. */
export interface Route<R> {
  endpoint: Endpoint<R>;
  exchangeDeps: ExchangeDeps;
  path: string;
  meter: Meter;
  counter: TokenCounter;
  pools: Pools;
  catalog: () => Catalog;
  upstreamHeaders: UpstreamHeaders;
  metrics: Metrics;
}

/** A request past its reservation for one model. */
export interface Reserving extends Who {
  model: Model;
  planned: Plan;
  reserved: Reserved;
  /** The client asked for a stream. */
  stream: boolean;
}

/** JSON.parse accepts any depth, JSON.stringify does not: a body nested too deeply to re-serialize is the client's error. */
export function unserializable(err: unknown): ApiError {
  if (!(err instanceof RangeError)) throw err;
  return apiError('invalid_request_error', 'The request body is nested too deeply.');
}

/** The prompt's tokens at settlement when the upstream reported none: counted by the worker, else in slices here. */
function settledPrompt<R>(route: Route<R>, prompt: PromptMeasure, requestId: string): number | Promise<number> {
  const tokens = (failure: CountFailure | undefined): number | Promise<number> => {
    if (!failure) return prompt.tokens;
    route.exchangeDeps.logger.warn({ requestId, failure }, 'prompt not counted by the worker at settlement: counted in slices');
    return countInSlices(prompt.texts()).then((counts) => {
      prompt.counted(counts);
      return prompt.tokens;
    });
  };
  const failure = countPrompt(route.counter, prompt);
  return failure instanceof Promise ? failure.then(tokens) : tokens(failure);
}

/** The value requests are kept together by on the pool's affinity, if it has one and the request carries it. */
function affinityKey(model: Model, body: unknown, who: Who): string | undefined {
  const by = model.pool.affinity;
  if (by === undefined) return undefined;
  if (by === 'key') return who.keyId ?? who.accountId;
  const value = (body as Record<string, unknown> | undefined)?.[by];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The fallbacks that can take this request (they serve its endpoint and support what it asks), in order. */
function fallbacksFor<R>(route: Route<R>, request: R, model: Model): Model[] {
  const catalog = route.catalog();
  const out: Model[] = [];
  for (const name of model.fallbacks) {
    const m = catalog.get(name);
    if (m && m.endpoints.has(route.endpoint.name) && !route.endpoint.unsupported(request, m)) out.push(m);
  }
  return out;
}

/** The request as every server of the model's pool gets it: its own model name, the allowance, our headers. */
function outgoing<R>(route: Route<R>, req: RoutedRequest, request: R, at: Reserving): { out: Outgoing; hideUsage: boolean } | ApiError {
  let body: string;
  let hideUsage: boolean;
  try {
    const upstreamBody = route.endpoint.upstreamBody(request, at.model, at.reserved.allowance);
    hideUsage = upstreamBody.hideUsage;
    body = JSON.stringify(upstreamBody.body);
  } catch (err) {
    return unserializable(err);
  }
  const headers = route.upstreamHeaders(req, {
    bodyLength: Buffer.byteLength(body),
    apiKey: at.model.upstreamApiKey,
    requestId: at.requestId,
  });
  const path = route.endpoint.translation?.(request, at.model)?.path ?? route.path;
  return { out: { method: 'POST', path, headers, body }, hideUsage };
}

/** Sends the request to the model's pool, then its fallbacks; from an answer on, the Exchange answers and settles. */
export async function forward<R>(route: Route<R>, req: RoutedRequest, res: RoutedResponse, request: R, r: Reserving): Promise<void> {
  const fallbacks = fallbacksFor(route, request, r.model);
  const deadline = Date.now() + route.pools.budgetMs;
  let at: Reserving = r;
  // The next fallback to try.
  let f = 0;
  for (;;) {
    const prepared = outgoing(route, req, request, at);
    if ('code' in prepared) {
      route.meter.release(at.accountId, at.requestId);
      at.reserved.undoModel();
      return sendError(res, prepared);
    }
    const exchange = exchangeFor(route, res, request, at, prepared.hideUsage);
    const options = {
      cancellation: exchange.cancellation,
      affinityKey: affinityKey(at.model, req.body, at),
      deadline,
      canFallBack: f < fallbacks.length,
    };
    // A request Node refuses to send (it throws) is a failed try, not a reservation left held until its lease ends.
    const outcome: PoolOutcome = await route.pools
      .of(at.model)
      .send(prepared.out, options)
      .catch((err: NodeJS.ErrnoException) => ({ kind: 'failed', err, timedOut: false, status: undefined }));
    if (outcome.kind === 'answer') return exchange.answered(outcome);
    if (outcome.kind === 'aborted' || exchange.gone) return;
    let next: Awaited<ReturnType<typeof reserveFallback>>;
    while (next === undefined && f < fallbacks.length) next = await reserveFallback(route, request, at, fallbacks[f++]);
    if (next === undefined) return unanswered(exchange, outcome, res);
    if (exchange.gone && !('error' in next)) {
      // The client left while the fallback was reserved: its exchange released the first hold; this one goes too.
      route.meter.release(next.accountId, next.requestId);
      return next.reserved.undoModel();
    }
    if ('error' in next) {
      // The store dropped what the request held when it refused; the exchange lets go of the rest.
      if (next.headers) for (const name in next.headers) res.setHeader(name, next.headers[name]);
      return exchange.refuse(next.error);
    }
    exchange.handOver();
    const reason = outcome.kind === 'unavailable' ? 'unhealthy' : outcome.kind;
    route.pools.of(at.model).fallbacks[reason]++;
    route.pools.metrics.failovers.inc({ model: at.model.id, fallback: next.model.id, reason });
    route.exchangeDeps.logger.warn(
      { requestId: at.requestId, model: at.model.id, fallback: next.model.id, outcome: outcome.kind },
      "model's pool could not answer: trying its fallback",
    );
    servedBy(res, next.model.id);
    res.setHeader(SERVED_MODEL_HEADER, next.model.id);
    if (next.reserved.headers) for (const name in next.reserved.headers) res.setHeader(name, next.reserved.headers[name]);
    at = next;
  }
}

/** Why the pool had no answer, told to the client (the exchange returns the reservation). */
function unanswered(exchange: Exchange, outcome: Exclude<PoolOutcome, { kind: 'answer' | 'aborted' }>, res: RoutedResponse): void {
  if (outcome.kind === 'overloaded') {
    res.setHeader('retry-after', '1');
    return exchange.refuse(apiError('server_overloaded', 'Every server of this model is busy; try again shortly.'));
  }
  if (outcome.kind === 'unavailable') return exchange.refuse(apiError('upstream_error', 'No server of this model is healthy.'));
  exchange.unanswered(outcome.err, outcome.timedOut, outcome.status);
}

/**
 * The fallback's plan and reservation, under the same request id: admitted, it replaces what the request held (at
 * the fallback's weights, and the first model's limits go back); refused, the request holds nothing. Undefined: its
 * plan refuses this request (too long for its context, say): the next fallback is tried, and after the last the
 * failure stands.
 */
async function reserveFallback<R>(
  route: Route<R>,
  request: R,
  at: Reserving,
  model: Model,
): Promise<Reserving | { kind: 'refused'; error: ApiError; headers?: Record<string, string> } | undefined> {
  const { meter, counter, metrics, endpoint } = route;
  let planned = planRequest(endpoint, request, model, at.planned.prompt, counter);
  if (planned instanceof Promise) planned = await planned;
  if ('code' in planned) return undefined;
  const deps = { meter, metrics, logger: route.exchangeDeps.logger, counter };
  const reserved = await reserve(deps, at, model, planned, endpoint.promptWords.field);
  if (reserved.kind === 'refused') return reserved;
  // The fallback answers in its place: the first model's slot, rpm and tpm go back as if it never came (a pool
  // that cannot answer must not use up the limits that would let the next request reach the fallback).
  at.reserved.undoModel();
  return { ...at, model, planned, reserved };
}

/** The exchange for the model at hand: it answers the client from here on, whichever server the pool chooses. */
function exchangeFor<R>(route: Route<R>, res: RoutedResponse, request: R, at: Reserving, hideUsage: boolean): Exchange {
  const { endpoint, exchangeDeps, path, meter } = route;
  const { accountId, keyId, requestId, model, planned, reserved } = at;
  const { answered } = endpoint;
  const echoed = endpoint.echoed?.(request);
  return new Exchange(
    exchangeDeps,
    {
      accountId,
      keyId,
      requestId,
      model,
      endpoint: endpoint.name,
      path,
      stream: at.stream,
      hideUsageChunk: hideUsage,
      answer: endpoint.answer,
      echoedChars: echoed?.reduce((n, prompt) => n + prompt.length, 0) ?? 0,
      outputTokens: (answer) => countOutput(exchangeDeps.count, endpoint.answer.outputTexts(answer, echoed)),
      translation: endpoint.translation?.(request, model),
      reservedOutput: reserved.allowance * planned.choices,
      hostedTools: planned.tools,
      promptTokens: () => settledPrompt(route, planned.prompt, requestId),
      lease: meter.hold(accountId, requestId, model),
      onAnswer: answered && ((ids, tokens) => answered.call(endpoint, ids, request, accountId, model, tokens)),
    },
    res,
  );
}
