/**
 * Limits as the APIs write them: the limits object (`{rpm?, tpm?, max_concurrent?}`, read by src/limits/limits.ts,
 * which the models file shares) and what a level's limits hold now (`limit_use`, in the operator's views).
 */
import { z } from 'zod';
import type { LevelUse, limitsWire } from '../limits/limits';

/** `{rpm?, tpm?, max_concurrent?}`; a field left out is no limit. */
export type LimitsObject = z.infer<typeof limitsWire>;

const windowUse = z.strictObject({ limit: z.number().int(), remaining: z.number().int(), reset_ms: z.number().int() });

/** Requests and tokens in the window, requests in flight; a limit that is not set is left out. */
export const limitUseSchema = z.strictObject({
  requests: windowUse.optional(),
  tokens: windowUse.optional(),
  concurrent: z.strictObject({ limit: z.number().int(), in_flight: z.number().int() }).optional(),
});
export type LimitUseObject = z.infer<typeof limitUseSchema>;

export function limitUseObject(u: LevelUse): LimitUseObject {
  const out: LimitUseObject = {};
  if (u.requests) out.requests = { limit: u.requests.limit, remaining: u.requests.remaining, reset_ms: u.requests.resetMs };
  if (u.tokens) out.tokens = { limit: u.tokens.limit, remaining: u.tokens.remaining, reset_ms: u.tokens.resetMs };
  if (u.concurrent) out.concurrent = { limit: u.concurrent.limit, in_flight: u.concurrent.inFlight };
  return out;
}
