/** The console's response headers: a strict Content-Security-Policy and no framing, sniffing or referrer leaks. */
import type { RequestHandler } from 'express';

/**
 * Only our own origin, for everything; no inline script or style (the bundle sets styles through the CSSOM, which CSP
 * allows), no plugins, no <base> tricks, forms post only to us, and no page may frame the console (clickjacking).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

export const securityHeaders: RequestHandler = (_req, res, next) => {
  for (const name in HEADERS) res.setHeader(name, HEADERS[name]);
  next();
};
