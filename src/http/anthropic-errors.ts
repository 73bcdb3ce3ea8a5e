/**
 * Our errors in Anthropic's shape, for the Messages API's routes: `{"type": "error", "error": {"type", "message"}}` with
 * the statuses Anthropic answers with, so the Anthropic SDKs (and Claude Code) classify and retry them as Anthropic's.
 * The codes stay ours (the request log and the metrics name them); only what the client reads changes.
 */

/** What of an error (errors.ts's ApiError) its Anthropic shape reads: this file imports nothing, errors.ts imports it. */
interface ErrorFacts {
  code: string;
  message: string;
  /** An upstream's own error type, when it named one. */
  type?: string;
}

/** Anthropic's error types (docs.anthropic.com, "Errors"), each with its status. */
const STATUS = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
} as const;

export type AnthropicErrorType = keyof typeof STATUS;

/**
 * Our codes whose Anthropic type is not the one their status implies. A short balance or a spent budget is a
 * `billing_error` (402): the SDKs retry 408, 409, 429 and 5xx, never 402, so a client is not sent back for a balance
 * that a retry cannot fix (a 429 would be retried by any client that ignores `x-should-retry: false`). Busy servers, a
 * full tokenizer queue and a process shutting down are `overloaded_error` (529, with retry-after): Anthropic's word for
 * "try again shortly".
 */
const BY_CODE: Readonly<Record<string, AnthropicErrorType>> = {
  invalid_api_key: 'authentication_error',
  insufficient_quota: 'billing_error',
  budget_exceeded: 'billing_error',
  model_not_allowed: 'permission_error',
  cross_site_request: 'permission_error',
  model_not_found: 'not_found_error',
  not_found: 'not_found_error',
  request_too_large: 'request_too_large',
  rate_limit_exceeded: 'rate_limit_error',
  too_many_attempts: 'rate_limit_error',
  internal_error: 'api_error',
  store_unavailable: 'api_error',
  upstream_timeout: 'timeout_error',
  server_overloaded: 'overloaded_error',
  prompt_not_counted: 'overloaded_error',
  shutting_down: 'overloaded_error',
};

const isAnthropicType = (type: string | undefined): type is AnthropicErrorType => type !== undefined && type in STATUS;

/** The Anthropic type of an error: an upstream's own (an Anthropic-speaking upstream's), else by code, else by status. */
function typeOf(err: ErrorFacts, status: number): AnthropicErrorType {
  if (err.code === 'upstream_error') {
    if (isAnthropicType(err.type)) return err.type;
    return status === 529
      ? 'overloaded_error'
      : status === 429
        ? 'rate_limit_error'
        : status >= 500
          ? 'api_error'
          : 'invalid_request_error';
  }
  return BY_CODE[err.code] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** The status and body of an error on a Messages route (`status`: ours for the error, kept for an upstream's). */
export function anthropicError(err: ErrorFacts, status: number): { status: number; body: string; retryAfter: boolean } {
  const type = typeOf(err, status);
  const ours = err.code !== 'upstream_error' && STATUS[type] !== 400 && STATUS[type] !== 500 ? STATUS[type] : status;
  const body = JSON.stringify({ type: 'error', error: { type, message: err.message } });
  return { status: ours, body, retryAfter: type === 'rate_limit_error' || type === 'overloaded_error' };
}

/** The SSE event that ends a Messages stream the upstream broke off (Anthropic's `error` event). */
export function anthropicErrorEvent(timedOut: boolean): string {
  const error = timedOut
    ? { type: 'timeout_error', message: 'The upstream stopped sending mid-stream.' }
    : { type: 'api_error', message: 'The upstream connection broke mid-stream.' };
  return `\nevent: error\ndata: ${JSON.stringify({ type: 'error', error })}\n\n`;
}
