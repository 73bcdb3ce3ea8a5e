/**
 * The metered routes dispatched ahead of Express's router: a `POST` to one of their exact paths (no query string)
 * runs its handler at once, on the request and response Express would have handed it (Express's prototypes,
 * `res.locals`, and the mount's `baseUrl` and `url`); anything else goes to the app as before. Express's router makes
 * each request two dispatchers' closures (the app's and the mounted router's), which live as long as the request and
 * are promoted under load: docs/performance.md has what skipping them saves.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';

/** What Express sets on a request it routes, beyond node's own fields. */
type Routed = Request & { originalUrl: string; baseUrl: string };

export interface DirectRoutes {
  /** Where the routes are mounted in the app: `/v1`. */
  mount: string;
  /** The routes by their path under the mount (`/chat/completions`); each answers, or passes an error on. */
  routes: ReadonlyMap<string, RequestHandler>;
  /** Answers a route's error, as the router's error handler would. */
  onError: ErrorRequestHandler;
}

export function directRoutes(app: Express, { mount, routes, onError }: DirectRoutes): RequestListener {
  return function dispatch(incoming: IncomingMessage, outgoing: ServerResponse): void {
    const url = incoming.url ?? '';
    const route = incoming.method === 'POST' && url.startsWith(mount) ? routes.get(url.slice(mount.length)) : undefined;
    if (route === undefined) return void app(incoming, outgoing);
    // What Express's app.handle and its router set up for a handler (x-powered-by is off in createApp).
    Object.setPrototypeOf(incoming, app.request);
    Object.setPrototypeOf(outgoing, app.response);
    const req = incoming as Routed;
    const res = outgoing as Response;
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Response['locals'];
    req.originalUrl = url;
    req.baseUrl = mount;
    req.url = url.slice(mount.length);
    req.params = {};
    route(req, res, (err?: unknown) => {
      // No route here passes its request on: one that did gets the internal error (and a log line), not a hang.
      onError(err ?? new Error(`${mount}${req.url} passed its request on`), req, res, () => res.destroy());
    });
  };
}
