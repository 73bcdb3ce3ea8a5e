/**
 * The metered routes' dispatch ahead of Express: an exact POST path runs its route on node's request and response,
 * with what the routes read of Express's routing (`res.locals`, `req.originalUrl`, `req.ips` by the app's trust
 * proxy) and without the app's other layers; every other request (a query string, another method, another path) goes
 * through the app as before, and a route's error is answered by the error handler.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { directRoutes } from '../../src/http/direct-routes';
import type { RouteErrorHandler } from '../../src/http/error-handler';
import type { RoutedHandler } from '../../src/http/handler-chain';

/** What a route saw of its request (answered with node's API, as a metered route's handlers answer). */
const describeRequest: RoutedHandler = (req, res) => {
  const body = JSON.stringify({
    originalUrl: req.originalUrl,
    ips: req.ips,
    locals: typeof res.locals === 'object' ? Object.keys(res.locals).length : 'none',
    express: 'get' in req,
    throughApp: res.getHeader('x-through-app') ?? null,
  });
  res.writeHead(201, { 'content-type': 'application/json' }).end(body);
};
const failing: RoutedHandler = (_req, _res, next) => next(new Error('upstream exploded'));
const passing: RoutedHandler = (_req, _res, next) => next();

// Four parameters, as Express tells an error handler from a middleware by its arity.
const onError: RouteErrorHandler = (err, _req, res, _next) => {
  res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message }));
};

let server: Server;
let base: string;

beforeAll(async () => {
  const routes = new Map<string, RoutedHandler>([
    ['/describe', describeRequest],
    ['/fail', failing],
    ['/pass', passing],
  ]);
  const app = express();
  // The proxy in front of us (loopback) is trusted: X-Forwarded-For's last hop counts as the client's address.
  app.set('trust proxy', 'loopback');
  // An app-level layer before the mount: Express's routing runs it; the direct dispatch does not.
  app.use((_req, res, next) => {
    res.setHeader('x-through-app', 'yes');
    next();
  });
  const router = express.Router();
  for (const [path, route] of routes) router.post(path, route);
  app.use('/v1', router);
  app.use(onError);
  server = createServer(directRoutes(app, { mount: '/v1', routes, onError }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('directRoutes', () => {
  const forwarded = { 'x-forwarded-for': '203.0.113.9, 127.0.0.1' };

  it("runs an exact POST path's route at once on node's request and response, without the app's layers", async () => {
    const res = await fetch(`${base}/v1/describe`, { method: 'POST', headers: forwarded });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      originalUrl: '/v1/describe',
      ips: ['203.0.113.9', '127.0.0.1'],
      locals: 0,
      express: false,
      throughApp: null,
    });
  });

  it('leaves a request with a query string to Express, which gives the same route the same ips', async () => {
    const res = await fetch(`${base}/v1/describe?x=1`, { method: 'POST', headers: forwarded });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      originalUrl: '/v1/describe?x=1',
      ips: ['203.0.113.9', '127.0.0.1'],
      locals: 0,
      express: true,
      throughApp: 'yes',
    });
  });

  it('leaves other methods and paths to Express', async () => {
    expect((await fetch(`${base}/v1/describe`)).status).toBe(404);
    const other = await fetch(`${base}/v2/describe`, { method: 'POST' });
    expect(other.status).toBe(404);
    expect(other.headers.get('x-through-app')).toBe('yes');
  });

  it("answers a route's error with the error handler", async () => {
    const res = await fetch(`${base}/v1/fail`, { method: 'POST' });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'upstream exploded' });
  });

  it('answers a route that passes its request on without an error as an internal error, not a hang', async () => {
    const res = await fetch(`${base}/v1/pass`, { method: 'POST' });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: '/v1/pass passed its request on' });
  });
});
