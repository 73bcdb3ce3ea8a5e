/** The host's own authentication in place of tokenmeter's bearer keys: its `authenticate(req)` says who is calling. */
import type { NextFunction, Request, Response } from 'express';
import type { Authenticate } from '../config/options';
import { apiError, sendError } from './errors';
import type { Logger } from '../observability/logger';

const UNAUTHENTICATED = apiError('invalid_api_key', 'This request is not authenticated.');
const NO_KEY = apiError('internal_error', 'The host authenticated this request without a tokenmeter key to charge.');
const FAILED = apiError('internal_error', 'Authentication failed.');

/** Sets `res.locals.keyId` (and `accountId`) from the host's answer; null is a 401, a throw a 500 (logged). */
export function hostAuth(authenticate: Authenticate, logger: Logger) {
  return async function authenticateByHost(req: Request, res: Response, next: NextFunction): Promise<void> {
    let identity;
    try {
      identity = await authenticate(req);
    } catch (err) {
      logger.error({ err: (err as Error)?.message }, 'the authenticate option threw');
      return sendError(res, FAILED);
    }
    if (!identity) return sendError(res, UNAUTHENTICATED);
    // Balances belong to keys until accounts land: without a key there is nothing to charge, so nothing is served.
    if (typeof identity.keyId !== 'string') {
      logger.error({ accountId: identity.accountId }, 'the authenticate option returned no keyId');
      return sendError(res, NO_KEY);
    }
    res.locals.keyId = identity.keyId;
    res.locals.accountId = identity.accountId;
    next();
  };
}
