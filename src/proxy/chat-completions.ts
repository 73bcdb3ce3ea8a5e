/**
 * POST /v1/chat/completions after authentication: validate, check the model and its limits, reserve, then forward
 * the rewritten body through the model's upstream. Everything after the reservation belongs to the Exchange.
 */
import type { NextFunction, Request, Response } from 'express';
import { unsupported, upstreamMessages } from '../catalog/capabilities';
import { requestedMaxTokens, validateChatRequest, type ChatRequest } from '../http/chat-request';
import { apiError, sendError, STORE_UNAVAILABLE } from '../http/errors';
import { PromptSize } from '../metering/estimate';
import type { LevelUse, LimitRefusal } from '../limits/limits';
import { budgetRefusal } from '../limits/budget-response';
import { rateLimitHeaders, rateLimitRefusal } from '../limits/rate-limit-response';
import { Exchange, type ExchangeDeps } from './exchange';
import { upstreamRequestHeaders } from '../http/http-headers';
import type { Logger } from '../observability/logger';
import type { Meter } from '../metering/metering';
import type { Metrics } from '../observability/metrics';
import type { RequestFacts } from '../observability/request-log';
import type { Catalog } from '../catalog/models';
import { resender, type Upstreams } from './upstream-proxy';

export interface ChatCompletionsOptions {
  /** The current catalog (a function, so a reload takes effect for the next request). */
  catalog: () => Catalog;
  meter: Meter;
  upstreams: Upstreams;
  logger: Logger;
  metrics: Metrics;
  upstreamResponseLimit: number;
  upstreamConnectTimeoutMs: number;
  upstreamTimeoutMs: number;
}

/** JSON.parse accepts any depth, JSON.stringify does not: a body nested too deeply to re-serialize is the client's error. */
function refuseUnserializable(res: Response, err: unknown): void {
  if (!(err instanceof RangeError)) throw err;
  sendError(res, apiError('invalid_request_error', 'The request body is nested too deeply.'));
}

/** A limit refused the request: a retryable 429 with its headers, counted by level and limit. Nothing was forwarded. */
function refuseRateLimited(res: Response, metrics: Metrics, refusal: LimitRefusal): void {
  metrics.rateLimited.inc({ level: refusal.level, limit: refusal.kind });
  const { error, headers } = rateLimitRefusal(refusal);
  sendError(res, error, headers);
}

export function chatCompletions(options: ChatCompletionsOptions) {
  const { meter, upstreams, logger } = options;
  const exchangeDeps: ExchangeDeps = {
    meter,
    logger,
    metrics: options.metrics,
    upstreamResponseLimit: options.upstreamResponseLimit,
    upstreamConnectTimeoutMs: options.upstreamConnectTimeoutMs,
    upstreamTimeoutMs: options.upstreamTimeoutMs,
  };

  return async function chatCompletionsHandler(req: Request, res: Response, next: NextFunction): Promise<void> {
    const facts = res.locals as RequestFacts;
    const keyId = facts.keyId ?? null;
    const accountId = facts.accountId as string;
    const validated = validateChatRequest(req.body);
    if (!validated.ok) return sendError(res, validated.error);
    const request = validated.request;
    facts.stream = request.stream === true;

    const model = options.catalog().get(request.model);
    if (!model) {
      return sendError(res, apiError('model_not_found', `The model '${request.model}' does not exist or is not served here.`, 'model'));
    }
    facts.model = model;
    const refusal = unsupported(request, model);
    if (refusal) return sendError(res, refusal);
    const requested = requestedMaxTokens(request);
    if (requested.value !== undefined && requested.value > model.maxOutputTokens) {
      return sendError(
        res,
        apiError(
          'invalid_request_error',
          `'${requested.field}' is too large: ${model.id} produces at most ${model.maxOutputTokens} tokens.`,
          requested.field,
        ),
      );
    }
    // The prompt's size: a bound that costs next to nothing, counted with the tokenizer only where that could change
    // an answer (near the context limit here, with a tight balance below, or at settlement without upstream usage).
    let prompt: PromptSize;
    try {
      prompt = new PromptSize(request);
      if (prompt.tokens + (requested.value ?? model.maxOutputTokens) > model.contextLength) prompt.count();
    } catch (err) {
      return refuseUnserializable(res, err);
    }
    const room = model.contextLength - prompt.tokens;
    if (room < 1 || (requested.value !== undefined && requested.value > room)) {
      return sendError(
        res,
        apiError(
          'context_length_exceeded',
          `This model's maximum context length is ${model.contextLength} tokens; the messages take about ${prompt.tokens}` +
            (requested.value !== undefined ? ` and '${requested.field}' asks for ${requested.value} more.` : '.'),
          room < 1 ? 'messages' : requested.field,
        ),
      );
    }
    let allowance = requested.value ?? Math.min(model.maxOutputTokens, room);
    const choices = request.n ?? 1;
    // Without max_tokens the allowance is ours to choose: no more than the model's tpm could ever admit.
    const tpm = model.limits?.tpm;
    if (tpm !== undefined && requested.value === undefined) {
      const fits = Math.floor((tpm - Math.ceil(prompt.tokens * model.inputWeight)) / (model.outputWeight * choices));
      allowance = Math.max(1, Math.min(allowance, fits));
    }
    if (!meter.accepting()) return sendError(res, STORE_UNAVAILABLE);

    const requestId = facts.requestId;
    const defaultAllowance = requested.value === undefined;
    const reserve = () =>
      meter.reserve({ accountId, keyId, requestId, model, promptTokens: prompt.tokens, allowance, defaultAllowance, choices });
    // The model's own limits (only a model that has them costs a store call): before the reservation, undone if refused.
    let modelUse: LevelUse | undefined;
    const undoModel = () => {
      if (modelUse) meter.endModel(model, requestId, { kind: 'undo' });
    };
    let reservation;
    try {
      if (model.limits) {
        const tokens = meter.reservationTokens(model, prompt.tokens, allowance, choices);
        const admitted = await meter.admitModel(model.id, model.limits, requestId, tokens);
        if (admitted.kind === 'rate_limited') return refuseRateLimited(res, options.metrics, admitted.refusal);
        modelUse = admitted.use;
      }
      reservation = await reserve();
      // A tight balance: the bound may be costing this request tokens. Count exactly and reserve again (it replaces).
      const short =
        reservation.kind === 'insufficient_quota' ||
        reservation.kind === 'budget_exceeded' ||
        (reservation.kind === 'reserved' && reservation.allowance < allowance);
      if (short && !prompt.exact) {
        prompt.count();
        reservation = await reserve();
      }
    } catch (err) {
      undoModel();
      logger.error({ requestId, err: (err as Error).message }, 'store unreachable during reservation');
      return sendError(res, STORE_UNAVAILABLE);
    }
    if (reservation.kind !== 'reserved') undoModel();
    switch (reservation.kind) {
      case 'invalid_key':
        return sendError(
          res,
          apiError('invalid_api_key', `This API key is ${reservation.reason === 'not_found' ? 'unknown' : reservation.reason}.`),
        );
      case 'account_not_found':
        return sendError(res, apiError('invalid_api_key', 'This API key is unknown.'));
      case 'account_disabled':
        return sendError(res, apiError('invalid_api_key', "This API key's account is disabled."));
      case 'model_not_allowed':
        return sendError(res, apiError('model_not_allowed', `This API key may not use the model '${model.id}'.`, 'model'));
      case 'insufficient_quota':
        return sendError(
          res,
          apiError(
            'insufficient_quota',
            reservation.limitedBy === 'key'
              ? `This key's spending limit leaves ${Math.max(0, reservation.available)} tokens, which do not cover the request.`
              : `This account's token balance (${Math.max(0, reservation.available)}) does not cover the request; buy a token package.`,
          ),
        );
      case 'rate_limited':
        return refuseRateLimited(res, options.metrics, reservation.refusal);
      case 'budget_exceeded': {
        const { error, headers } = budgetRefusal(reservation.refusal);
        return sendError(res, error, headers);
      }
      case 'reserved':
        break;
    }
    // OpenAI's headers for the tightest level, only when some level has limits (else nothing to say, nothing to do).
    if (modelUse || reservation.limitUse) {
      const headers = rateLimitHeaders(modelUse ? [modelUse, ...(reservation.limitUse ?? [])] : (reservation.limitUse ?? []));
      for (const name in headers) res.setHeader(name, headers[name]);
    }

    // The upstream sees its own model name, a completion cap the reservation covers, and a request for stream usage.
    const upstreamBody: ChatRequest = { ...request, model: model.upstreamModel, messages: upstreamMessages(request, model) };
    if (requested.value === undefined || reservation.allowance < requested.value) upstreamBody[requested.field] = reservation.allowance;
    let hideUsageChunk = false;
    if (request.stream === true && model.streamIncludeUsage) {
      hideUsageChunk = request.stream_options?.include_usage !== true;
      upstreamBody.stream_options = { ...request.stream_options, include_usage: true };
    }
    // Written as the string it is: the socket encodes it once, with no Buffer copy of the body in between.
    let body: string;
    try {
      body = JSON.stringify(upstreamBody);
    } catch (err) {
      meter.release(accountId, requestId);
      undoModel();
      return refuseUnserializable(res, err);
    }

    const forward = upstreams.get(model.upstreamUrl).forward;
    const exchange = new Exchange(
      exchangeDeps,
      {
        accountId,
        keyId,
        requestId,
        model,
        stream: request.stream === true,
        hideUsageChunk,
        promptTokens: () => prompt.count(),
        lease: meter.hold(accountId, requestId, model),
        resend: resender(forward, req, res, next),
      },
      res,
    );
    res.locals.exchange = exchange;
    req.headers = upstreamRequestHeaders(req.headers, Buffer.byteLength(body), model.upstreamApiKey, requestId);
    // http-proxy pipes the incoming request into the upstream one. Ours was already read and rewritten, so it gets
    // the new body instead, written at once (unlike writing it in the proxyReq event, this cannot race the pipe's end).
    req.pipe = (<T extends NodeJS.WritableStream>(dest: T): T => {
      dest.end(body);
      return dest;
    }) as typeof req.pipe;
    await forward(req, res, next);
  };
}
