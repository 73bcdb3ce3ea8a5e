/**
 * The reservation step: the model's own limits first (only a model that has them costs a store call), then the
 * account's and key's reservation, counted exactly and tried again when a tight balance makes the bound cost tokens.
 * A refusal undoes what was admitted and says why in OpenAI's shape.
 */
import type { Model } from '../../catalog/models';
import { apiError, STORE_UNAVAILABLE, type ApiError } from '../../http/errors';
import type { LevelUse, LimitRefusal } from '../../limits/limits';
import { budgetRefusal } from '../../limits/budget-response';
import { rateLimitHeaders, rateLimitRefusal } from '../../limits/rate-limit-response';
import type { Meter } from '../../metering/metering';
import { countPrompt, type TokenCounter } from '../../metering/prompt-counter';
import type { Logger } from '../../observability/logger';
import type { Metrics } from '../../observability/metrics';
import type { ReserveResult } from '../../store/records/metering';
import { reservedToolTokens } from '../hosted-tool-plan';
import { uncounted, type Plan } from './plan';

export interface Reserved {
  kind: 'reserved';
  /** Output tokens per choice the balance covers (≤ the plan's allowance). */
  allowance: number;
  /** OpenAI's rate-limit headers for the tightest level; undefined when no level has limits. */
  headers: Record<string, string> | undefined;
  /** Lets go of the model's limits when the request ends unserved. */
  undoModel: () => void;
}

export interface Refused {
  kind: 'refused';
  error: ApiError;
  headers?: Record<string, string>;
}

export interface ReserveDeps {
  meter: Meter;
  counter: TokenCounter;
  metrics: Metrics;
  logger: Logger;
}

export interface Who {
  accountId: string;
  keyId: string | null;
  requestId: string;
}

/** A limit refused the request: a retryable 429 with its headers, counted by level and limit. */
function rateLimited(metrics: Metrics, refusal: LimitRefusal): Refused {
  metrics.rateLimited.inc({ level: refusal.level, limit: refusal.kind });
  const { error, headers } = rateLimitRefusal(refusal);
  return { kind: 'refused', error, headers };
}

export async function reserve(deps: ReserveDeps, who: Who, model: Model, planned: Plan, field: string): Promise<Reserved | Refused> {
  const { meter } = deps;
  const { prompt, allowance, choices, defaultAllowance } = planned;
  // Hosted tool calls are reserved up front like the prompt: their tokens are known per call, their number bounded.
  const toolTokens = reservedToolTokens(planned.tools);
  const { accountId, keyId, requestId } = who;
  const once = () =>
    meter.reserve({ accountId, keyId, requestId, model, promptTokens: prompt.tokens, toolTokens, allowance, defaultAllowance, choices });
  let modelUse: LevelUse | undefined;
  const undoModel = () => {
    if (modelUse) meter.endModel(model, requestId, { kind: 'undo' });
  };
  let reservation: ReserveResult;
  try {
    if (model.limits) {
      const tokens = meter.reservationTokens(model, prompt.tokens, allowance, choices) + toolTokens;
      const admitted = await meter.admitModel(model.id, model.limits, requestId, tokens);
      if (admitted.kind === 'rate_limited') return rateLimited(deps.metrics, admitted.refusal);
      modelUse = admitted.use;
    }
    reservation = await once();
    // A tight balance: the bound may be costing this request tokens. Count exactly and reserve again (it replaces).
    const short =
      reservation.kind === 'insufficient_quota' ||
      reservation.kind === 'budget_exceeded' ||
      (reservation.kind === 'reserved' && reservation.allowance < allowance);
    if (short && !prompt.exact) {
      const failure = await countPrompt(deps.counter, prompt);
      if (failure) {
        if (reservation.kind === 'reserved') meter.release(accountId, requestId);
        undoModel();
        return { kind: 'refused', error: uncounted(failure, field) };
      }
      reservation = await once();
    }
  } catch (err) {
    undoModel();
    deps.logger.error({ requestId, err: (err as Error).message }, 'store unreachable during reservation');
    return { kind: 'refused', error: STORE_UNAVAILABLE };
  }
  if (reservation.kind !== 'reserved') {
    undoModel();
    if (reservation.kind === 'rate_limited') return rateLimited(deps.metrics, reservation.refusal);
    if (reservation.kind === 'budget_exceeded') {
      const { error, headers } = budgetRefusal(reservation.refusal);
      return { kind: 'refused', error, headers };
    }
    return { kind: 'refused', error: refusal(reservation, model) };
  }
  // OpenAI's headers for the tightest level, only when some level has limits (else nothing to say, nothing to do).
  const uses = modelUse ? [modelUse, ...(reservation.limitUse ?? [])] : reservation.limitUse;
  const headers = uses ? rateLimitHeaders(uses) : undefined;
  return { kind: 'reserved', allowance: reservation.allowance, headers, undoModel };
}

/** Why the store refused the reservation, as the client reads it. */
function refusal(reservation: Exclude<ReserveResult, { kind: 'reserved' | 'rate_limited' | 'budget_exceeded' }>, model: Model): ApiError {
  switch (reservation.kind) {
    case 'invalid_key':
      return apiError('invalid_api_key', `This API key is ${reservation.reason === 'not_found' ? 'unknown' : reservation.reason}.`);
    case 'account_not_found':
      return apiError('invalid_api_key', 'This API key is unknown.');
    case 'account_disabled':
      return apiError('invalid_api_key', "This API key's account is disabled.");
    case 'model_not_allowed':
      return apiError('model_not_allowed', `This API key may not use the model '${model.id}'.`, 'model');
    case 'insufficient_quota':
      return apiError('insufficient_quota', shortfall(reservation.available, reservation.limitedBy));
  }
}

/**
 * What falls short, said plainly: below zero is debt (an answer cost more than was reserved, docs/endpoints-and-metering.md,
 * "How a request is metered"), which the next package pays first.
 */
function shortfall(available: number, limitedBy: 'account' | 'key'): string {
  if (limitedBy === 'key') {
    return available < 0
      ? `This key's spending limit is overdrawn by ${-available} tokens; it covers no request.`
      : `This key's spending limit leaves ${available} tokens, which do not cover the request.`;
  }
  return available < 0
    ? `This account's token balance is ${available}: it is in debt, which the next token package pays first; buy a token package.`
    : `This account's token balance (${available}) does not cover the request; buy a token package.`;
}
