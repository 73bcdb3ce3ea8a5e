/**
 * What an exchange leaves on the upstream connection: the socket goes back to the keep-alive pool and outlives the
 * request, so a listener left on it would keep the whole exchange (request, response, bodies) alive with it.
 */
import { EventEmitter } from 'node:events';
import { Agent, createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Exchange, type ExchangeContext, type ExchangeDeps } from '../../src/proxy/exchange';

describe('Exchange on a new upstream connection', () => {
  const server = createServer((_req, res) => res.end('{}'));
  const sockets: Socket[] = [];
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** One request on a fresh connection (its own agent), the exchange attached as http-proxy does; the socket after it. */
  async function requestOnNewSocket(withExchange: boolean): Promise<Socket> {
    const deps = { upstreamConnectTimeoutMs: 10_000, upstreamTimeoutMs: 10_000 } as ExchangeDeps;
    const exchange = new Exchange(deps, {} as ExchangeContext, new EventEmitter() as ServerResponse);
    const { port } = server.address() as AddressInfo;
    const req = request({ host: '127.0.0.1', port, agent: new Agent({ keepAlive: true }), method: 'POST' });
    let socket: Socket | undefined;
    req.once('socket', (s: Socket) => {
      socket = s;
      expect(s.connecting).toBe(true);
      // http-proxy's proxyReq event comes with the socket, before it has connected.
      if (withExchange) exchange.attach(req);
    });
    await new Promise<void>((resolve, reject) => {
      req.once('response', (res) => res.resume().once('end', resolve));
      req.once('error', reject);
      req.end('{}');
    });
    // The response's end and the socket's return to the pool are in the same tick; let the pool's own work finish.
    await new Promise((r) => setImmediate(r));
    sockets.push(socket as Socket);
    return socket as Socket;
  }

  it('takes its connect-timeout listeners off the socket once it has connected', async () => {
    const bare = await requestOnNewSocket(false);
    const attached = await requestOnNewSocket(true);
    expect(attached.destroyed).toBe(false);
    const listeners = (s: Socket) => ({ close: s.listenerCount('close'), connect: s.listenerCount('connect') });
    expect(listeners(attached)).toEqual(listeners(bare));
  });
});
