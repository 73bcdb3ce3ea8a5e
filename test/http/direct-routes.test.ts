/**
 * The metered routes' dispatch ahead of Express's router: an exact POST path runs its route with the request and
 * response Express would have given it, without the app's other layers; every other request (a query string, another
 * method, another path) goes through the app as before, and a route's error is answered by the error handler.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { directRoutes } from '../../src/http/direct-routes';

/** What a route saw of its request: the fields Express sets, and whether Express's methods are there. */
const describeRequest: RequestHandler = (req, res) => {
  res.status(201).json({
    url: req.url,
    baseUrl: req.baseUrl,
    originalUrl: req.originalUrl,
    params: req.params,
    locals: Object.keys(res.locals).length,
    express: typeof req.get === 'function' && req.app !== undefined,
    throughApp: res.getHeader('x-through-app') ?? null,
  });
};
const failing: RequestHandler = (_req, _res, next) => next(new Error('upstream exploded'));
const passing: RequestHandler = (_req, _res, next) => next();

const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => {
  res.status(500).json({ error: err.message });
};

let server: Server;
let base: string;

beforeAll(async () => {
  const routes = new Map<string, RequestHandler>([
    ['/describe', describeRequest],
    ['/fail', failing],
    ['/pass', passing],
  ]);
  const app = express();
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
  it("runs an exact POST path's route at once, with Express's request and response and the mount's urls", async () => {
    const res = await fetch(`${base}/v1/describe`, { method: 'POST' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      url: '/describe',
      baseUrl: '/v1',
      originalUrl: '/v1/describe',
      params: {},
      locals: 0,
      express: true,
      throughApp: null,
    });
  });

  it('leaves a request with a query string to Express, which routes it to the same route', async () => {
    const res = await fetch(`${base}/v1/describe?x=1`, { method: 'POST' });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ url: '/describe?x=1', baseUrl: '/v1', originalUrl: '/v1/describe?x=1', throughApp: 'yes' });
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
