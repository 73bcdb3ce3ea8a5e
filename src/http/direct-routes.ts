/**
 * The metered routes dispatched ahead of Express: a `POST` to one of their exact paths (no query string) runs its
 * handler at once on node's own request and response; anything else goes to the Express app, where the same routes
 * are mounted. Express made each request two dispatchers' closures (the app's and the mounted router's) that live as
 * long as the request, and gave its request and response Express's prototypes (`Object.setPrototypeOf`, which costs
 * V8 a fresh hidden class per object): docs/performance.md has what skipping both saves.
 *
 * So a metered route's handlers use node's API, not Express's methods (`res.status`, `req.get`: absent here, and the
 * whole proxy suite runs every metered route on this path). They get what they read of Express's routing: the
 * `res.locals` the request context lives in, `req.originalUrl`, and `req.ips` (the client's address chain as the
 * app's `trust proxy` accepts it, for X-Forwarded-For).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';
import proxyaddr from 'proxy-addr';

export interface DirectRoutes {
  /** Where the routes are mounted in the app: `/v1`. */
  mount: string;
  /** The routes by their path under the mount (`/chat/completions`); each answers, or passes an error on. */
  routes: ReadonlyMap<string, RequestHandler>;
  /** Answers a route's error, as the router's error handler would. */
  onError: ErrorRequestHandler;
}

/** What a route's handlers read that Express's routing sets. */
type Routed = IncomingMessage & { originalUrl: string; ips: string[] };

export function directRoutes(app: Express, { mount, routes, onError }: DirectRoutes): RequestListener {
  // Express's own compiled `trust proxy` (app.set compiles it; createApp sets it before any request).
  const trusted = () => app.get('trust proxy fn') as (addr: string, i: number) => boolean;
  return function dispatch(incoming: IncomingMessage, outgoing: ServerResponse): void {
    const url = incoming.url ?? '';
    const route = incoming.method === 'POST' && url.startsWith(mount) ? routes.get(url.slice(mount.length)) : undefined;
    if (route === undefined) return void app(incoming, outgoing);
    const routed = incoming as Routed;
    routed.originalUrl = url;
    // Express's `req.ips`, as its getter makes it: the trusted addresses, the farthest first, without the socket's.
    const ips = proxyaddr.all(incoming, trusted());
    ips.reverse().pop();
    routed.ips = ips;
    (outgoing as ServerResponse & { locals: Response['locals'] }).locals = Object.create(null) as Response['locals'];
    const req = routed as unknown as Request;
    const res = outgoing as unknown as Response;
    route(req, res, (err?: unknown) => {
      // No route here passes its request on: one that did gets the internal error (and a log line), not a hang.
      onError(err ?? new Error(`${url} passed its request on`), req, res, () => res.destroy());
    });
  };
}
