/**
 * Rate and concurrency limits: what a limit is, on which level it applies, and what an admission or a refusal
 * reports. The same `limits` object is accepted on keys, accounts and models.
 */
import { z } from 'zod';

/** Requests per window, tokens per window, requests in flight; each optional. */
export interface Limits {
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
}

export type LimitLevel = 'key' | 'account' | 'model';

/** Which limit a refusal hit. */
export type LimitKind = 'requests' | 'tokens' | 'concurrent';

/** The rate windows are a minute long (rpm, tpm); RATE_LIMIT_WINDOW_SECONDS shortens them for tests and demos. */
export const DEFAULT_WINDOW_MS = 60_000;

const limitCount = (what: string) =>
  z
    .number({ error: `must be a whole number of ${what}` })
    .int(`must be a whole number of ${what}`)
    .positive('must be at least 1')
    .max(1_000_000_000, 'must be at most 1000000000');

/**
 * The wire shape (snake_case), as the models file and every API write limits: requests per minute, tokens per minute,
 * requests in flight; a field left out is no limit.
 */
export const limitsWire = z.strictObject({
  rpm: limitCount('requests').optional(),
  tpm: limitCount('tokens').optional(),
  max_concurrent: limitCount('requests').optional(),
});

/** The wire shape read into `Limits`. */
export const limitsSchema = limitsWire.transform((l): Limits => compact({ rpm: l.rpm, tpm: l.tpm, maxConcurrent: l.max_concurrent }));

export type LimitsInput = z.input<typeof limitsSchema>;

/** The wire shape of limits, fields without a limit left out. */
export function limitsObject(l: Limits): LimitsInput {
  return { ...(l.rpm && { rpm: l.rpm }), ...(l.tpm && { tpm: l.tpm }), ...(l.maxConcurrent && { max_concurrent: l.maxConcurrent }) };
}

/** Drops unset fields, so `{}` means no limits and `hasLimits` can be a cheap check. */
export function compact(l: Limits): Limits {
  const out: Limits = {};
  if (l.rpm) out.rpm = l.rpm;
  if (l.tpm) out.tpm = l.tpm;
  if (l.maxConcurrent) out.maxConcurrent = l.maxConcurrent;
  return out;
}

/** The form kept in a store hash (field `rl`): "rpm:tpm:max_concurrent", 0 for an unset one; "" for no limits. */
export function encodeLimits(l: Limits | null | undefined): string {
  return hasLimits(l) ? `${l.rpm ?? 0}:${l.tpm ?? 0}:${l.maxConcurrent ?? 0}` : '';
}

export function decodeLimits(s: string | undefined): Limits | null {
  if (!s) return null;
  const [rpm, tpm, maxConcurrent] = s.split(':').map(Number);
  const l = compact({ rpm, tpm, maxConcurrent });
  return hasLimits(l) ? l : null;
}

export function hasLimits(l: Limits | null | undefined): l is Limits {
  return !!l && (l.rpm !== undefined || l.tpm !== undefined || l.maxConcurrent !== undefined);
}

/** One rate window's state after a request: what the x-ratelimit-* headers report. */
export interface WindowUse {
  limit: number;
  remaining: number;
  /** Until every use now in the window has left it (OpenAI: "resets to its initial state"). */
  resetMs: number;
}

/** One level's use: requests and tokens in the window, requests in flight. Absent: that limit is not set. */
export interface LevelUse {
  requests?: WindowUse;
  tokens?: WindowUse;
  concurrent?: { limit: number; inFlight: number };
}

/** A request a level refused: which limit, its value, its use, and when a retry could pass. */
export interface LimitRefusal {
  level: LimitLevel;
  kind: LimitKind;
  limit: number;
  /** Requests or tokens counted in the window, or requests in flight. */
  used: number;
  /** Tokens this request asked for (tpm only). */
  requested: number;
  retryAfterMs: number;
  /** The request alone exceeds the tpm limit: no retry can pass. */
  tooLarge: boolean;
  /** The other limits of the refusing level, for the headers. */
  use: LevelUse;
}

/** A level's limits and the request's share of them, as the stores take them. */
export interface LimitCheck {
  limits: Limits;
  /** Tokens this request counts against tpm (its reservation). */
  tokens: number;
  requestId: string;
  leaseMs: number;
}

export type AdmitResult = { kind: 'admitted'; use: LevelUse } | { kind: 'rate_limited'; refusal: LimitRefusal };

/**
 * How a request lets go of a level: `settle` with the charged tokens (tpm corrected to them), `release` (forwarded
 * but nothing charged: tpm corrected to 0), or `undo` (refused after admission: as if it never came).
 */
export type LimitEnd = { kind: 'settle'; tokens: number } | { kind: 'release' } | { kind: 'undo' };
