/**
 * What a try leaves on the upstream connection: the socket goes back to the keep-alive pool and outlives the request,
 * so a listener left on it would keep the request (and the exchange holding it) alive with it.
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { attempt } from '../../src/upstreams/attempt';
import { Cancellation } from '../../src/upstreams/cancellation';
import { UpstreamServer } from '../../src/upstreams/server';

describe('a try on a new upstream connection', () => {
  const server = createServer((_req, res) => res.end('{}'));
  const sockets: Socket[] = [];
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A bare request on a fresh connection, to compare with. */
  async function bareRequest(): Promise<Socket> {
    const { port } = server.address() as AddressInfo;
    const req = request({ host: '127.0.0.1', port, agent: new Agent({ keepAlive: true }), method: 'POST' });
    let socket: Socket | undefined;
    req.once('socket', (s: Socket) => (socket = s));
    await new Promise<void>((resolve, reject) => {
      req.once('response', (res) => res.resume().once('end', resolve));
      req.once('error', reject);
      req.end('{}');
    });
    await new Promise((r) => setImmediate(r));
    sockets.push(socket as Socket);
    return socket as Socket;
  }

  /** The same through attempt(), which arms a connect timeout on the connecting socket. */
  async function attempted(): Promise<Socket> {
    const { port } = server.address() as AddressInfo;
    const target = new UpstreamServer(
      `http://127.0.0.1:${port}/v1`,
      { url: '', label: 'http://127.0.0.1', weight: 1, maxConcurrent: undefined },
      4,
    );
    const out = { method: 'POST', path: '/x', headers: {}, body: '{}' };
    const result = await attempt(target, out, { connectMs: 10_000, idleMs: 10_000 }, new Cancellation());
    if (result.kind !== 'answer') throw result.err;
    const socket = result.req.socket as Socket;
    await new Promise((resolve) => result.res.resume().once('end', resolve));
    // The response's end and the socket's return to the pool are in the same tick; let the pool's own work finish.
    await new Promise((r) => setImmediate(r));
    sockets.push(socket);
    return socket;
  }

  it('takes its connect-timeout listeners off the socket once it has connected', async () => {
    const bare = await bareRequest();
    const tried = await attempted();
    expect(tried.destroyed).toBe(false);
    const listeners = (s: Socket) => ({ close: s.listenerCount('close'), connect: s.listenerCount('connect') });
    expect(listeners(tried)).toEqual(listeners(bare));
  });
});
