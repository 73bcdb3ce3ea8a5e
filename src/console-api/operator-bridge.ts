/**
 * Lets an admin session use the token-guarded admin API: the request is handed to the very same router with the
 * admin token as its credential, so the console adds no second set of handlers (and no second way to change state).
 * Mounted only behind the session check and the admin-role check.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function operatorBridge(adminToken: string, adminRouter: RequestHandler): RequestHandler {
  const credential = `Bearer ${adminToken}`;
  return function asOperator(req: Request, res: Response, next: NextFunction): void {
    req.headers.authorization = credential;
    adminRouter(req, res, next);
  };
}
