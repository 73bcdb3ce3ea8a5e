/**
 * What a client sees of the limits, in OpenAI's terms: the x-ratelimit-* headers of the tightest level on every
 * answer, and a retryable 429 `rate_limit_exceeded` with Retry-After and retry-after-ms when a limit refuses.
 */
import { apiError, type ApiError } from '../http/errors';
import type { LevelUse, LimitLevel, LimitRefusal, WindowUse } from './limits';

/** A duration the way OpenAI writes it (Go's time.Duration): `120ms`, `1s`, `1.5s`, `6m0s`, `1h0m0s`. */
export function formatReset(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole === 0) return '0s';
  if (whole < 1000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = `${((whole % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

/** Of the levels' windows, the one with the fewest left (on a tie, the smaller limit). */
function tightest(windows: (WindowUse | undefined)[]): WindowUse | undefined {
  let best: WindowUse | undefined;
  for (const w of windows) {
    if (!w) continue;
    if (!best || w.remaining < best.remaining || (w.remaining === best.remaining && w.limit < best.limit)) best = w;
  }
  return best;
}

/** OpenAI's six headers for the tightest level, requests and tokens each on their own; none for a level without them. */
export function rateLimitHeaders(uses: readonly LevelUse[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const requests = tightest(uses.map((u) => u.requests));
  if (requests) {
    headers['x-ratelimit-limit-requests'] = String(requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(requests.remaining);
    headers['x-ratelimit-reset-requests'] = formatReset(requests.resetMs);
  }
  const tokens = tightest(uses.map((u) => u.tokens));
  if (tokens) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = formatReset(tokens.resetMs);
  }
  return headers;
}

const ON: Record<LimitLevel, string> = { key: 'this key', account: 'this account', model: 'this model' };

/** The 429 for a refusal, and its headers: Retry-After (whole seconds), retry-after-ms, and the level's x-ratelimit-*. */
export function rateLimitRefusal(r: LimitRefusal): { error: ApiError; headers: Record<string, string> } {
  const wait = formatReset(r.retryAfterMs);
  let message: string;
  if (r.tooLarge) {
    message =
      `Request too large for tokens per minute on ${ON[r.level]}: limit ${r.limit}, requested ${r.requested}. ` +
      'Lower max_tokens or shorten the messages.';
  } else if (r.kind === 'concurrent') {
    message = `Concurrency limit reached on ${ON[r.level]}: limit ${r.limit} requests in flight. Please try again when one finishes.`;
  } else {
    const what = r.kind === 'requests' ? `used ${r.used}` : `used ${r.used}, requested ${r.requested}`;
    message = `Rate limit reached for ${r.kind} per minute on ${ON[r.level]}: limit ${r.limit}, ${what}. Please try again in ${wait}.`;
  }
  const error: ApiError = { ...apiError('rate_limit_exceeded', message), type: r.kind === 'tokens' ? 'tokens' : 'requests' };
  const headers: Record<string, string> = {
    ...rateLimitHeaders([r.use]),
    'retry-after': String(Math.ceil(r.retryAfterMs / 1000)),
    'retry-after-ms': String(Math.ceil(r.retryAfterMs)),
  };
  // The OpenAI SDKs retry a 429 on their own; a request larger than the limit itself never passes, so say so.
  if (r.tooLarge) headers['x-should-retry'] = 'false';
  return { error, headers };
}
