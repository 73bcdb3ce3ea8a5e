/**
 * A metered route's handlers, run in turn as one handler as Express runs a route's: each one's `next()` calls the one
 * after it; an error (`next(err)`, a throw, a returned promise's rejection) goes to the chain's own `next` and ends
 * the chain. Its handlers see node's request and response with what Express's routing sets that they read, and no
 * more: direct-routes.ts runs the chain without Express, so a handler that reached for Express's methods would not
 * compile.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction } from 'express';

/** Node's request, as Express's router and direct-routes.ts both hand it on. */
export interface RoutedRequest extends IncomingMessage {
  /** The URL as the client sent it (the mount's prefix and the query included). */
  originalUrl: string;
  /** The client's address chain as the app's `trust proxy` accepts it, the farthest first (Express's `req.ips`). */
  ips: string[];
  /** The parsed JSON body, once json-body.ts has read it. */
  body?: unknown;
}

/** Node's response, with the `locals` the request context lives in (http/request-context.ts). */
export interface RoutedResponse extends ServerResponse {
  locals: Record<string, unknown>;
}

export type RoutedHandler = (req: RoutedRequest, res: RoutedResponse, next: NextFunction) => unknown;

export function handlerChain(handlers: readonly RoutedHandler[]): RoutedHandler {
  return function chain(req, res, done): void {
    let at = 0;
    const next = (err?: unknown): void => {
      // Express's 'route' skips the rest of a route: here, the rest of the chain.
      if (err === 'route') return done();
      if (err !== undefined && err !== null) return done(err);
      const handler = handlers[at++];
      if (handler === undefined) return done();
      try {
        const ret = handler(req, res, next);
        if (ret instanceof Promise) ret.then(undefined, (e: unknown) => done(e ?? new Error('Rejected promise')));
      } catch (e) {
        done(e);
      }
    };
    next();
  };
}
