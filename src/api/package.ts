/** A token package (what an account spends from), and the operator's grant of one. */
import { z } from 'zod';
import type { TokenPackage } from '../store/records/common';
import { futureTime, grantAmount, tokenCount, unixTime } from './fields';

export const packageSchema = z.strictObject({
  id: z.string(),
  tokens: tokenCount,
  remaining: tokenCount,
  expires_at: unixTime.nullable(),
  created: unixTime,
});
export type PackageObject = z.infer<typeof packageSchema>;

export function packageObject(p: TokenPackage): PackageObject {
  return { id: p.id, tokens: p.tokens, remaining: p.remaining, expires_at: p.expiresAt, created: p.created };
}

/** `POST /admin/accounts/:id/packages` and `POST /admin/keys/:id/packages`. */
export const grantRequest = z.strictObject({
  tokens: grantAmount,
  expires_at: futureTime.nullish(),
});
export type GrantRequest = z.input<typeof grantRequest>;
