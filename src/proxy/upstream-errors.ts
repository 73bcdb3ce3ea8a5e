/** The upstream's failures in our shape: a connection failure (errno) to a gateway status, an error answer kept as sent. */
import { apiError, type ApiError } from '../http/errors';

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_HEADERS_TIMEOUT']);

const DESCRIPTIONS: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ENOTFOUND: 'host name could not be resolved',
  EAI_AGAIN: 'host name could not be resolved',
  ECONNRESET: 'closed the connection',
  EHOSTUNREACH: 'host is unreachable',
  ENETUNREACH: 'network is unreachable',
  EPIPE: 'closed the connection',
};

export function upstreamFailure(err: NodeJS.ErrnoException, timedOut: boolean): ApiError {
  if (timedOut || (err.code !== undefined && TIMEOUT_CODES.has(err.code))) {
    return apiError('upstream_timeout', 'The upstream did not answer in time.');
  }
  const what = (err.code && DESCRIPTIONS[err.code]) ?? 'could not be reached';
  return apiError('upstream_error', `The upstream ${what}.`);
}

/**
 * A keep-alive race, not an upstream failure: the request went out on a reused connection, and the connection closed
 * before any byte of an answer (the rule Node's http docs give for sending a request again).
 */
export function closedWhileIdle(err: NodeJS.ErrnoException, reusedSocket: boolean, answered: boolean, timedOut: boolean): boolean {
  return reusedSocket && !answered && !timedOut && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
}

/** The SSE event that ends a client's stream the upstream broke off; a blank line first, in case the last event's was lost. */
export function midStreamErrorEvent(timedOut: boolean): string {
  const event = {
    error: {
      message: timedOut ? 'The upstream stopped sending mid-stream.' : 'The upstream connection broke mid-stream.',
      type: 'api_error',
      param: null,
      code: timedOut ? 'upstream_timeout' : 'upstream_error',
    },
  };
  return `\ndata: ${JSON.stringify(event)}\n\n`;
}

/** An upstream error status and body, in our shape: its status and message kept. */
export function upstreamErrorFrom(status: number, body: Buffer | undefined): ApiError {
  let message = `The upstream answered with status ${status}.`;
  let type: string | undefined;
  let param: string | null = null;
  if (body && body.length > 0) {
    const text = body.toString('utf8');
    try {
      const parsed = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
      const e = parsed.error;
      if (typeof e === 'object' && e !== null) {
        const o = e as { message?: unknown; type?: unknown; param?: unknown };
        if (typeof o.message === 'string') message = o.message;
        if (typeof o.type === 'string') type = o.type;
        if (typeof o.param === 'string') param = o.param;
      } else if (typeof e === 'string') message = e;
      else if (typeof parsed.message === 'string') message = parsed.message;
      else if (typeof parsed.detail === 'string') message = parsed.detail;
    } catch {
      message = text.slice(0, 500);
    }
  }
  // The upstream refusing *our* credentials is our fault, not the client's key: a gateway error, not a 401/403.
  if (status === 401 || status === 403 || status === 407) {
    return { code: 'upstream_error', message: `The upstream refused the proxy's credentials (status ${status}).`, status: 502 };
  }
  const valid = status >= 400 && status <= 599;
  return {
    code: 'upstream_error',
    message,
    param,
    status: valid ? status : 502,
    type: type ?? (valid && status < 500 ? 'invalid_request_error' : 'api_error'),
  };
}
