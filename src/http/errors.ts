/** The closed list of errors tokenmeter itself returns, and the one place that turns them into HTTP responses. */
import type { ServerResponse } from 'node:http';
import { anthropicError } from './anthropic-errors';
import { answeredWithError, errorShapeOf, setErrorShape } from './request-context';

/** Every error code the proxy can answer with, and its HTTP status and OpenAI error type. */
const CATALOG = {
  invalid_request_error: { status: 400, type: 'invalid_request_error' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  malformed_http: { status: 400, type: 'invalid_request_error' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error' },
  redemption_code_invalid: { status: 400, type: 'invalid_request_error' },
  redemption_code_used: { status: 400, type: 'invalid_request_error' },
  redemption_code_expired: { status: 400, type: 'invalid_request_error' },
  invalid_signature: { status: 400, type: 'invalid_request_error' },
  invalid_api_key: { status: 401, type: 'invalid_request_error' },
  session_required: { status: 401, type: 'invalid_request_error' },
  invalid_credentials: { status: 401, type: 'invalid_request_error' },
  cross_site_request: { status: 403, type: 'invalid_request_error' },
  registration_closed: { status: 403, type: 'invalid_request_error' },
  admin_required: { status: 403, type: 'invalid_request_error' },
  model_not_allowed: { status: 403, type: 'invalid_request_error' },
  model_not_found: { status: 404, type: 'invalid_request_error' },
  not_found: { status: 404, type: 'invalid_request_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  email_taken: { status: 409, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  request_headers_too_large: { status: 431, type: 'invalid_request_error' },
  insufficient_quota: { status: 429, type: 'insufficient_quota' },
  // Not retryable before the budget's period ends (x-should-retry: false); the message and x-budget-reset say when.
  budget_exceeded: { status: 429, type: 'insufficient_quota' },
  // Retryable: no x-should-retry: false, so the OpenAI SDKs back off (by Retry-After) and try again on their own.
  rate_limit_exceeded: { status: 429, type: 'requests' },
  too_many_attempts: { status: 429, type: 'rate_limit_error' },
  internal_error: { status: 500, type: 'api_error' },
  upstream_error: { status: 502, type: 'api_error' },
  store_unavailable: { status: 503, type: 'api_error' },
  // PostgreSQL (the ledger archive) is down while Redis answers: only the archived part of a read is refused.
  archive_unavailable: { status: 503, type: 'api_error' },
  // Retryable: the tokenizer's budget ran out or its queue was full (the message says which).
  prompt_not_counted: { status: 503, type: 'api_error' },
  shutting_down: { status: 503, type: 'api_error' },
  // Retryable (Retry-After): every server of the model's pool is at its max_concurrent past the queue wait.
  server_overloaded: { status: 503, type: 'api_error' },
  upstream_timeout: { status: 504, type: 'api_error' },
} as const;

export type ErrorCode = keyof typeof CATALOG;

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** An error as data: what went wrong, which request field it concerns, and optionally an explicit status. */
export interface ApiError {
  code: ErrorCode;
  message: string;
  param?: string | null;
  /** Overrides the code's status (used to keep an upstream's own 4xx/5xx status). */
  status?: number;
  /** Overrides the code's OpenAI type (used to keep an upstream's own error type). */
  type?: string;
}

export function apiError(code: ErrorCode, message: string, param: string | null = null): ApiError {
  return { code, message, param };
}

/** The fail-closed answer whenever the store cannot be reached: nothing is served unmetered. */
export const STORE_UNAVAILABLE: ApiError = apiError('store_unavailable', 'The metering store is unavailable; try again shortly.');

/** A failure of one part that says which part is down: thrown through a store guard, answered as its own error. */
export class PartOutage extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

export function statusOf(err: ApiError): number {
  return err.status ?? CATALOG[err.code].status;
}

export function errorBody(err: ApiError): OpenAIErrorBody {
  return {
    error: {
      message: err.message,
      type: err.type ?? CATALOG[err.code].type,
      param: err.param ?? null,
      code: err.code,
    },
  };
}

/** The API whose error shape a route answers in: OpenAI's, or Anthropic's on the Messages API's routes. */
export type ErrorShape = 'openai' | 'anthropic';

/** A route answers its errors in `shape` from here on (set before anything can refuse the request). */
export function answerErrorsAs(res: ServerResponse, shape: ErrorShape): void {
  setErrorShape(res, shape);
}

/**
 * Writes an error response, unless headers already went out (then the caller must end the stream its own way), in
 * the route's shape (answerErrorsAs). Refusals that a retry cannot fix carry `x-should-retry: false`, which the
 * official SDKs honour.
 */
export function sendError(res: ServerResponse, err: ApiError, extraHeaders?: Record<string, string>): void {
  // Leave the code for the request log and the refusal metrics; an upstream's fault also its message, which is what
  // the operator needs to see (a stream where JSON was asked for, the upstream's own error).
  answeredWithError(res, err.code, err.message);
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  let status = statusOf(err);
  let payload: string;
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', ...extraHeaders };
  if (errorShapeOf(res) === 'anthropic') {
    const shaped = anthropicError(err, status);
    status = shaped.status;
    payload = shaped.body;
    // The Anthropic SDKs wait as retry-after says; without one they back off on their own, so one is always given.
    if (shaped.retryAfter && headers['retry-after'] === undefined && !res.hasHeader('retry-after')) headers['retry-after'] = '1';
  } else payload = JSON.stringify(errorBody(err));
  headers['content-length'] = Buffer.byteLength(payload);
  if (err.code === 'insufficient_quota' || err.code === 'budget_exceeded' || err.code === 'invalid_api_key') {
    headers['x-should-retry'] = 'false';
  }
  if (err.code === 'invalid_api_key') headers['www-authenticate'] = 'Bearer realm="tokenmeter"';
  res.writeHead(status, headers);
  res.end(payload);
}
