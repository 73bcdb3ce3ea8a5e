/**
 * A deadline for the request body: one not fully received within BODY_TIMEOUT_SECONDS of reaching tokenmeter gets
 * `408 request_timeout` with `Connection: close`, and its connection is closed, however slowly its bytes keep coming.
 * A timer per request rather than Node's server.requestTimeout, so it holds where the routers are mounted in a host's
 * app too; each request is timed once, by whichever router (or the standalone app) sees it first.
 */
import type { NextFunction } from 'express';
import type { RoutedRequest, RoutedResponse } from './handler-chain';
import { apiError, sendError } from './errors';

const TIMED = Symbol('tokenmeter.bodyTimeout');

export function bodyTimeout(ms: number) {
  const seconds = Math.round(ms / 100) / 10;
  const TIMEOUT = apiError('request_timeout', `The request body was not received within ${seconds} s.`);
  return function bodyDeadline(req: RoutedRequest, res: RoutedResponse, next: NextFunction): void {
    const marked = req as RoutedRequest & { [TIMED]?: true };
    if (req.complete || marked[TIMED]) return next();
    marked[TIMED] = true;
    const timer = setTimeout(() => {
      if (req.complete) return;
      // An answer already went out (a refusal before the body was read): only the connection is left to close.
      if (res.headersSent) return void req.socket.destroy();
      // With Connection: close, Node ends the socket once this answer is written, whatever the client still sends.
      sendError(res, TIMEOUT, { connection: 'close' });
    }, ms);
    const stop = () => clearTimeout(timer);
    req.once('end', stop);
    req.once('close', stop);
    next();
  };
}
