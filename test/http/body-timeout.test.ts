/**
 * A client that trickles its request body (a byte at a time, never finishing) to hold connections open: past
 * BODY_TIMEOUT_SECONDS it gets 408 in the OpenAI shape and the connection is closed, on every kind of route, in the
 * standalone server and where the routers are mounted in a host's app. Nothing is charged or reserved.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import express from 'express';
import { createTokenmeter, MemoryStore, type Tokenmeter } from '../../src/index';
import { ADMIN_TOKEN, startConsole, type ConsoleFixture } from '../helpers/console';
import { MODEL, UPSTREAM_MODEL } from '../helpers/proxy';
import { expectOpenAIErrorShape } from '../helpers/raw-http';
import { keyWithTokens, storeKinds } from '../helpers/stores';

/**
 * Sends a request's headers promising a 1 KB body, then a byte every 100 ms, and resolves with everything the server
 * sent once it closed the connection. Only a server that cuts the body off lets this resolve.
 */
function trickle(url: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const lines = Object.entries({ 'content-type': 'application/json', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1024\r\n${lines.join('')}\r\n{"model":`);
    const drip = setInterval(() => socket.write(' '), 100);
    const done = () => {
      clearInterval(drip);
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', done);
    socket.on('error', () => socket.destroy());
  });
}

/** The 408 the server sent, checked: status, Connection: close, and the OpenAI error body. */
function expectTimedOut(answer: string): void {
  const [head, body] = answer.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 408 /);
  expect(head.toLowerCase()).toContain('connection: close');
  expect(expectOpenAIErrorShape(body).code).toBe('request_timeout');
}

describe.each(storeKinds)('a trickled body (%s store)', (kind) => {
  let c: ConsoleFixture;
  beforeAll(async () => {
    c = await startConsole(kind, { BODY_TIMEOUT_SECONDS: '1' });
  });
  afterAll(async () => {
    await c.close();
  });

  it('a trickled body is cut off with 408 on completions, and nothing is charged or reserved', async () => {
    const key = await keyWithTokens(c.s.store, 5_000);
    expectTimedOut(await trickle(c.proxy.url, '/v1/chat/completions', { authorization: `Bearer ${key.secret}` }));
    expect(c.upstream.calls).toHaveLength(0);
    expect(await c.s.store.getKey(key.id)).toMatchObject({ balance: 5_000, reserved: 0 });
  });

  it.each([
    ['the console API', '/console/api/login', {}],
    ['the admin API', '/admin/accounts', { authorization: `Bearer ${ADMIN_TOKEN}` }],
  ])('a trickled body is cut off with 408 on %s', async (_what, path, headers) => {
    expectTimedOut(await trickle(c.proxy.url, path, headers));
  });

  it.each([
    ['a bad key (401)', '/v1/chat/completions', { authorization: 'Bearer sk-wrong' }, 401],
    ['no admin token (401)', '/admin/accounts', {}, 401],
    ['an unknown route (404)', '/nowhere', {}, 404],
  ])('a body refused before it was read, for %s, cannot hold its connection open either', async (_what, path, headers, status) => {
    // The answer went out at once; the trickle then only kept the connection, until the deadline closed it.
    expect(await trickle(c.proxy.url, path, headers)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  });
});

describe('a trickled body in a host app', () => {
  let meter: Tokenmeter;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    meter = await createTokenmeter({
      upstreamUrl: 'http://127.0.0.1:9/v1',
      models: [{ id: MODEL, upstream_model: UPSTREAM_MODEL, context_length: 8192, max_output_tokens: 1024 }],
      store: new MemoryStore(),
      logLevel: 'silent',
      bodyTimeoutSeconds: 1,
    });
    const app = express();
    app.use('/v1', meter.openai);
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await meter.close();
  });

  it('a trickled body is cut off with 408 by the mounted router itself (no server setting needed)', async () => {
    const key = await keyWithTokens(meter.store, 5_000);
    expectTimedOut(await trickle(url, '/v1/chat/completions', { authorization: `Bearer ${key.secret}` }));
    expect(await meter.store.getKey(key.id)).toMatchObject({ balance: 5_000, reserved: 0 });
  });
});
