/**
 * The one wrapper for a route's store failures, on every API (admin, console, webhooks, models): a store that throws
 * answers 503 `store_unavailable` (fail closed), never a 500 with a stack; a part that says it is down (PartOutage) answers its own error.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../observability/logger';
import { PartOutage, sendError, STORE_UNAVAILABLE } from './errors';

export type GuardedHandler = (req: Request, res: Response, next: NextFunction) => Promise<void>;
export type StoreGuard = (handler: GuardedHandler) => RequestHandler;

export function storeGuard(logger: Logger): StoreGuard {
  return (handler) =>
    async function guarded(req: Request, res: Response, next: NextFunction): Promise<void> {
      try {
        await handler(req, res, next);
      } catch (err) {
        logger.error({ err: (err as Error).message, route: req.originalUrl.split('?')[0] }, 'request failed on the store');
        sendError(res, err instanceof PartOutage ? err.error : STORE_UNAVAILABLE);
      }
    };
}
