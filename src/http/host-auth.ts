/** The host's own authentication in place of tokenmeter's bearer keys: its `authenticate(req)` says who is calling. */
import type { NextFunction, Request } from 'express';
import type { RoutedRequest, RoutedResponse } from './handler-chain';
import type { Authenticate } from '../config/option-types';
import { apiError, sendError } from './errors';
import { authenticated } from './request-context';
import type { Logger } from '../observability/logger';

const UNAUTHENTICATED = apiError('invalid_api_key', 'This request is not authenticated.');
const FAILED = apiError('internal_error', 'Authentication failed.');

/**
 * Records the caller (request-context.ts: the account charged, and the key whose caps and model list apply, or null)
 * from the host's answer; null is a 401, a throw a 500 (logged, its message not sent).
 */
export function hostAuth(authenticate: Authenticate, logger: Logger) {
  return async function authenticateByHost(req: RoutedRequest, res: RoutedResponse, next: NextFunction): Promise<void> {
    let identity;
    try {
      // Express's request: only Express runs a host-authenticated route (openai-router.ts hands none out to direct-routes.ts).
      identity = await authenticate(req as Request);
    } catch (err) {
      logger.error({ err: (err as Error)?.message }, 'the authenticate option threw');
      return sendError(res, FAILED);
    }
    if (!identity) return sendError(res, UNAUTHENTICATED);
    if (typeof identity.accountId !== 'string') {
      logger.error('the authenticate option returned no accountId');
      return sendError(res, FAILED);
    }
    authenticated(res, { accountId: identity.accountId, keyId: identity.keyId ?? null });
    next();
  };
}
