/** The limit scripts' replies (lua/limits/) read back, in the one place their shapes are checked. */
import { CONCURRENCY_RETRY_MS } from '../../limits/limit-window';
import type { AdmitResult, LevelUse, LimitKind, LimitLevel, LimitRefusal } from '../../limits/limits';

/** A limit script's reply of a shape none of ours returns. */
export class LimitReplyError extends Error {
  override name = 'LimitReplyError';
}

const KINDS = new Set<string>(['requests', 'tokens', 'concurrent']);

/** An admission reply: {'ok', use...} | {'limited', kind, limit, used, retry ms, too large, use...}. */
export function parseAdmitReply(reply: unknown, level: LimitLevel, tokens: number): AdmitResult {
  if (Array.isArray(reply) && reply[0] === 'ok' && reply.length === 8) return { kind: 'admitted', use: parseLevelUse(reply, 1) };
  if (Array.isArray(reply) && reply[0] === 'limited' && reply.length === 13) {
    return { kind: 'rate_limited', refusal: parseRefusal(reply, 1, level, tokens) };
  }
  throw new LimitReplyError(`limit admission replied ${JSON.stringify(reply)}`);
}

/** lim_check's refusal followed by lim_use's list, from `at`: 12 values. */
export function parseRefusal(reply: unknown[], at: number, level: LimitLevel, tokens: number): LimitRefusal {
  if (!KINDS.has(reply[at] as string)) throw new LimitReplyError(`a limit refusal of kind ${JSON.stringify(reply[at])}`);
  return {
    level,
    kind: reply[at] as LimitKind,
    limit: Number(reply[at + 1]),
    used: Number(reply[at + 2]),
    requested: tokens,
    // A concurrency refusal's wait is not measured: a slot frees when a request ends, so the caller retries after this.
    retryAfterMs: reply[at] === 'concurrent' ? CONCURRENCY_RETRY_MS : Math.max(1, Number(reply[at + 3])),
    tooLarge: Number(reply[at + 4]) === 1,
    use: parseLevelUse(reply, at + 5),
  };
}

/** lim_use's list from `at`: {rpm, requests, tpm, tokens, reset ms, max_concurrent, in flight}; a 0 limit is none. */
export function parseLevelUse(reply: unknown[], at: number): LevelUse {
  const [rpm, requests, tpm, tokens, resetMs, cc, inFlight] = reply.slice(at, at + 7).map(Number);
  const use: LevelUse = {};
  const reset = Math.max(0, resetMs);
  if (rpm > 0) use.requests = { limit: rpm, remaining: Math.max(0, rpm - requests), resetMs: reset };
  if (tpm > 0) use.tokens = { limit: tpm, remaining: Math.max(0, tpm - tokens), resetMs: reset };
  if (cc > 0) use.concurrent = { limit: cc, inFlight };
  return use;
}
