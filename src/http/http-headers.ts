/** Header hygiene between client and upstream: an allow-list upstream, hop-by-hop headers and credentials never cross. */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { RoutedRequest } from './handler-chain';

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

/** The client headers every upstream gets as the client sent them: what says how to answer. */
const FORWARDED = ['accept'];

/**
 * Headers an operator may not add to the forwarded ones (UPSTREAM_FORWARD_HEADERS): those we set ourselves (the body's
 * type, length and encoding, our key, the request id, our X-Forwarded-For, the host), the client's credentials, and
 * hop-by-hop headers and claims about the client's address, which are only ever ours to make.
 */
export const NOT_FORWARDABLE: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  'authorization',
  'api-key',
  'x-api-key',
  'cookie',
  'host',
  'content-type',
  'content-length',
  'content-encoding',
  'accept-encoding',
  'expect',
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'forwarded',
]);

/** The charge shown on a metered JSON answer (src/proxy/charge-shown.ts): tokens charged, the balance after. */
export const CHARGED_HEADER = 'x-tokenmeter-charged-tokens';
export const BALANCE_HEADER = 'x-tokenmeter-balance-tokens';
/** Of the charged tokens, those for hosted tool calls (src/proxy/hosted-tool-plan.ts); only on a charge that has them. */
export const TOOL_HEADER = 'x-tokenmeter-tool-tokens';
/** The model that answered, on an answer a fallback served (docs/upstream-pools.md). */
export const SERVED_MODEL_HEADER = 'x-tokenmeter-model';

/**
 * Upstream headers the client must not get: lengths and encodings we recompute, the upstream's cookies, and its
 * rate-limit and charge headers, which describe the proxy's own upstream account, not the client's (ours do that).
 */
const NOT_DOWNSTREAM = new Set([
  CHARGED_HEADER,
  BALANCE_HEADER,
  TOOL_HEADER,
  SERVED_MODEL_HEADER,
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

/** What a request's headers upstream are made of besides the client's: ours. */
export interface UpstreamRequestFacts {
  /** The length of the JSON body we send; undefined: no body. */
  bodyLength: number | undefined;
  apiKey: string | undefined;
  requestId: string;
}

/** Makes a request's headers upstream from the client's. */
export type UpstreamHeaders = (client: RoutedRequest, facts: UpstreamRequestFacts) => IncomingHttpHeaders;

/**
 * The client's address and the proxies it came through, as the app's `trust proxy` accepts them (Express's `req.ips`:
 * none without it), then the address that connected to us: our own X-Forwarded-For, never the client's claim.
 */
function forwardedFor(client: RoutedRequest): string {
  const peer = client.socket.remoteAddress;
  return peer === undefined ? client.ips.join(', ') : [...client.ips, peer].join(', ');
}

/**
 * The headers sent upstream, by allow-list: `accept` and the operator's `forward` names as the client sent them (the
 * client cannot steer the operator's key to another organisation or project, or claim another address); then ours:
 * the body's type and length, identity encoding, the request id, X-Forwarded-For and the operator's key.
 */
export function upstreamHeaders(forward: readonly string[] = []): UpstreamHeaders {
  // The option's check refused the NOT_FORWARDABLE names and lowercased the rest.
  const names = [...new Set([...FORWARDED, ...forward])];
  return function headersUpstream(client, facts) {
    const named = connectionTokens(client.headers);
    const out: IncomingHttpHeaders = {};
    for (const name of names) {
      const value = client.headers[name];
      if (value !== undefined && !named.includes(name)) out[name] = value;
    }
    if (facts.bodyLength !== undefined) {
      out['content-type'] = 'application/json';
      out['content-length'] = String(facts.bodyLength);
    }
    // Compressed bodies would blind the meter: ask for identity (and decode anyway if we get something else).
    out['accept-encoding'] = 'identity';
    out['x-request-id'] = facts.requestId;
    out['x-forwarded-for'] = forwardedFor(client);
    if (facts.apiKey !== undefined) out.authorization = `Bearer ${facts.apiKey}`;
    return out;
  };
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
