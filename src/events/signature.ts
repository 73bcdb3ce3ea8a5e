/**
 * Webhook signatures, like Stripe's: `tokenmeter-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "t.body")>`.
 * The receiver recomputes the HMAC over the exact body bytes, compares in constant time, and refuses old timestamps.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'tokenmeter-signature';

/** A new endpoint secret: `whsec_` and 32 random bytes, hex. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

function hmac(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

/** The signature header's value for `body` sent at `t` (Unix seconds). */
export function signWebhook(secret: string, body: string, t: number = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${hmac(secret, t, body)}`;
}

export type VerifyResult = { valid: true; timestamp: number } | { valid: false; reason: 'malformed' | 'mismatch' | 'too_old' };

export interface VerifyOptions {
  /** Oldest signature accepted, in seconds (replays of older deliveries are refused). Default 300. */
  toleranceSeconds?: number;
  /** The clock, in Unix seconds. Default now. */
  now?: number;
}

/**
 * Checks a delivery's `tokenmeter-signature` header against the raw body (the exact bytes received, not a re-encoded
 * object) and the endpoint's secret. Any `v1` in the header may match (several are sent while a secret is rolled).
 */
export function verifyWebhook(
  body: string | Buffer,
  header: string | undefined,
  secret: string,
  options: VerifyOptions = {},
): VerifyResult {
  if (header === undefined) return { valid: false, reason: 'malformed' };
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const signatures = parts.filter(([k, v]) => k === 'v1' && v !== undefined).map(([, v]) => v);
  if (!Number.isInteger(t) || signatures.length === 0) return { valid: false, reason: 'malformed' };
  const expected = Buffer.from(hmac(secret, t, typeof body === 'string' ? body : body.toString('utf8')));
  const matches = signatures.some((s) => {
    const given = Buffer.from(s);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) return { valid: false, reason: 'mismatch' };
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return { valid: false, reason: 'too_old' };
  return { valid: true, timestamp: t };
}
