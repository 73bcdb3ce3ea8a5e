/** Wraps a console handler so a store failure answers 503 (fail closed), never a 500 with a stack. */
import type { NextFunction, Request, Response } from 'express';
import { sendError, STORE_UNAVAILABLE } from '../http/errors';
import type { Logger } from '../observability/logger';

type Handler = (req: Request, res: Response, next: NextFunction) => Promise<void>;

export function storeGuard(logger: Logger) {
  return (handler: Handler) =>
    async function guarded(req: Request, res: Response, next: NextFunction): Promise<void> {
      try {
        await handler(req, res, next);
      } catch (err) {
        logger.error({ err: (err as Error).message, route: req.path }, 'console request failed on the store');
        sendError(res, STORE_UNAVAILABLE);
      }
    };
}
