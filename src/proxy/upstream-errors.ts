/** The one map from an upstream connection failure (errno) to the gateway status the client gets. */
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
