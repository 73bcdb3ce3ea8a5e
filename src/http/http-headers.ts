/** Header hygiene between client and upstream: hop-by-hop headers and credentials never cross. */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Client headers the upstream must never see: credentials (ours replace them), and what we recompute. The body we
 * send is our own plain JSON, so the client's content-encoding does not describe it.
 */
const NOT_UPSTREAM = new Set([
  'authorization',
  'api-key',
  'x-api-key',
  'cookie',
  'host',
  'content-length',
  'content-encoding',
  'accept-encoding',
  'expect',
]);

/**
 * Upstream headers the client must not get: lengths and encodings we recompute, the upstream's cookies, and its
 * rate-limit headers, which describe the proxy's own upstream account, not the client's (ours do that).
 */
const NOT_DOWNSTREAM = new Set([
  'content-length',
  'content-encoding',
  'set-cookie',
  'x-request-id',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
]);

function connectionTokens(headers: IncomingHttpHeaders): string[] {
  const c = headers.connection;
  return typeof c === 'string'
    ? c
        .toLowerCase()
        .split(',')
        .map((t) => t.trim())
    : [];
}

/** The headers sent upstream: the client's end-to-end headers, our body's length, identity encoding, our credentials. */
export function upstreamRequestHeaders(
  client: IncomingHttpHeaders,
  bodyLength: number,
  apiKey: string | undefined,
  requestId: string,
): IncomingHttpHeaders {
  const named = connectionTokens(client);
  const out: IncomingHttpHeaders = {};
  for (const name in client) {
    if (HOP_BY_HOP.has(name) || NOT_UPSTREAM.has(name) || named.includes(name)) continue;
    out[name] = client[name];
  }
  out['content-type'] = 'application/json';
  out['content-length'] = String(bodyLength);
  // Compressed bodies would blind the meter: ask for identity (and decode anyway if we get something else).
  out['accept-encoding'] = 'identity';
  out['x-request-id'] = requestId;
  if (apiKey !== undefined) out.authorization = `Bearer ${apiKey}`;
  return out;
}

/** The headers passed to the client from an upstream response (our x-request-id is already set on the response). */
export function downstreamResponseHeaders(upstream: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = connectionTokens(upstream);
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    if (HOP_BY_HOP.has(name) || NOT_DOWNSTREAM.has(name) || named.includes(name)) continue;
    out[name] = upstream[name];
  }
  return out;
}
