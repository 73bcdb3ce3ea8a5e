/** The admin API's bearer token check: compared in constant time, whatever the length or content of the guess. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { apiError, sendError } from '../http/errors';
import { requestBearerToken } from '../http/keys';

const REFUSED = apiError('invalid_api_key', 'The admin token is missing or wrong. Send "Authorization: Bearer <ADMIN_TOKEN>".');

export function adminToken(token: string) {
  // Comparing digests makes the comparison length-independent as well as constant-time.
  const expected = createHash('sha256').update(token).digest();
  return function requireAdminToken(req: Request, res: Response, next: NextFunction): void {
    const given = requestBearerToken(req);
    const digest = createHash('sha256')
      .update(given ?? '')
      .digest();
    if (given === undefined || !timingSafeEqual(digest, expected)) return sendError(res, REFUSED);
    next();
  };
}
