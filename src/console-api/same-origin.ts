/**
 * Refuses cross-site requests to the console's mutating routes (CSRF): a browser names the page that sent a request
 * in `Sec-Fetch-Site` and `Origin`, and a page of another site must not act with the account holder's cookie.
 * Scripts (curl, SDKs) send neither header and pass; they cannot hold a browser's cookie anyway. Bodies must be JSON,
 * which a cross-site HTML form cannot send without a CORS preflight that we never grant.
 */
import type { NextFunction, Request, Response } from 'express';
import { apiError, sendError } from '../http/errors';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const CROSS_SITE = apiError('cross_site_request', 'Cross-site requests are refused; use the console on this site.');
const NOT_JSON = apiError('unsupported_media_type', "Send the body as JSON with 'Content-Type: application/json'.");

export function sameOrigin() {
  return function refuseCrossSite(req: Request, res: Response, next: NextFunction): void {
    if (SAFE_METHODS.has(req.method)) return next();
    const site = req.headers['sec-fetch-site'];
    // same-site is refused too: a sibling subdomain is not this console.
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return sendError(res, CROSS_SITE);
    const origin = req.headers.origin;
    if (origin !== undefined && !sameHost(origin, req.headers.host)) return sendError(res, CROSS_SITE);
    if (hasBody(req) && !req.is('application/json')) return sendError(res, NOT_JSON);
    next();
  };
}

/**
 * The Origin's host against the Host header. The scheme is not compared: behind a TLS-terminating proxy without
 * TRUST_PROXY the request looks like http while the page was https, and a page on this host is ours either way.
 */
function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined || origin === 'null') return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
