/**
 * The metered routes dispatched ahead of Express: a `POST` to one of their exact paths (no query string) runs its
 * handler at once on node's own request and response; anything else goes to the Express app, where the same routes
 * are mounted. Express made each request two dispatchers' closures (the app's and the mounted router's) that live as
 * long as the request, and gave its request and response Express's prototypes (`Object.setPrototypeOf`, which costs
 * V8 a fresh hidden class per object): docs/performance.md has what skipping both saves.
 *
 * The routes' handlers are typed on node's objects (handler-chain.ts): they get here what they read of Express's
 * routing, the `res.locals` the request context lives in, `req.originalUrl`, and `req.ips` (the client's address
 * chain as the app's `trust proxy` accepts it, for X-Forwarded-For).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Express } from 'express';
import proxyaddr from 'proxy-addr';
import type { RouteErrorHandler } from './error-handler';
import type { RoutedHandler, RoutedRequest, RoutedResponse } from './handler-chain';

export interface DirectRoutes {
  /** Where the routes are mounted in the app: `/v1`. */
  mount: string;
  /** The routes by their path under the mount (`/chat/completions`); each answers, or passes an error on. */
  routes: ReadonlyMap<string, RoutedHandler>;
  /** Answers a route's error, as the router's error handler would. */
  onError: RouteErrorHandler;
}

export function directRoutes(app: Express, { mount, routes, onError }: DirectRoutes): RequestListener {
  // Keyed by the whole URL a client sends, once, so a request is one lookup.
  const byUrl = new Map([...routes].map(([path, route]) => [`${mount}${path}`, route]));
  // Express's own compiled `trust proxy` (app.set compiles it; createApp sets it before it builds this listener).
  const trusted = app.get('trust proxy fn') as (addr: string, i: number) => boolean;
  return function dispatch(incoming: IncomingMessage, outgoing: ServerResponse): void {
    const url = incoming.url ?? '';
    const route = incoming.method === 'POST' ? byUrl.get(url) : undefined;
    if (route === undefined) return void app(incoming, outgoing);
    const req = incoming as RoutedRequest;
    req.originalUrl = url;
    // Express's `req.ips`, as its getter makes it: the trusted addresses, the farthest first, without the socket's.
    const ips = proxyaddr.all(incoming, trusted);
    ips.reverse().pop();
    req.ips = ips;
    const res = outgoing as RoutedResponse;
    res.locals = Object.create(null) as RoutedResponse['locals'];
    route(req, res, (err?: unknown) => {
      // No route here passes its request on: one that did gets the internal error (and a log line), not a hang.
      onError(err ?? new Error(`${url} passed its request on`), req, res, () => res.destroy());
    });
  };
}
