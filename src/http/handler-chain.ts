/**
 * Handlers run in turn as one handler, as Express runs a route's: each one's `next()` calls the one after it; an
 * error (`next(err)`, a throw, a returned promise's rejection) goes to the chain's own `next` and ends the chain.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function handlerChain(handlers: readonly RequestHandler[]): RequestHandler {
  return function chain(req: Request, res: Response, done: NextFunction): void {
    let at = 0;
    const next = (err?: unknown): void => {
      // Express's 'route' skips the rest of a route: here, the rest of the chain.
      if (err === 'route') return done();
      if (err !== undefined && err !== null) return done(err);
      const handler = handlers[at++];
      if (handler === undefined) return done();
      try {
        const ret = handler(req, res, next) as unknown;
        if (ret instanceof Promise) ret.then(undefined, (e: unknown) => done(e ?? new Error('Rejected promise')));
      } catch (e) {
        done(e);
      }
    };
    next();
  };
}
