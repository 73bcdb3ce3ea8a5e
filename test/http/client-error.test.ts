/**
 * Requests Node refuses before Express sees them (too-large headers, malformed HTTP, a request too slow to arrive)
 * get the OpenAI error body and `Connection: close`, through Node's real parser; a socket already gone or carrying a
 * response under way gets nothing written (writing would corrupt that response or raise on a dead socket).
 */
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { clientErrorHandler } from '../../src/http/client-error';
import { createLogger } from '../../src/observability/logger';
import { expectOpenAIErrorShape, sendBytes } from '../helpers/raw-http';

let server: Server;
let port: number;
const serverSockets: Socket[] = [];

beforeAll(async () => {
  // A short request timeout, checked often, so the 408 comes within the test.
  server = createServer({ requestTimeout: 300, headersTimeout: 300, connectionsCheckingInterval: 50 }, (req, res) => {
    if (req.url === '/slow') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial ');
      setTimeout(() => res.end('done'), 200);
      return;
    }
    // Read the whole body first, so a body that never finishes keeps the request open until its timeout.
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  server.on('connection', (s) => serverSockets.push(s));
  server.on('clientError', clientErrorHandler(createLogger('silent')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function parse(raw: string): { status: number; headers: string; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  return { status: Number(raw.slice(9, 12)), headers: raw.slice(0, end), body: raw.slice(end + 4) };
}

describe('clientErrorHandler', () => {
  it.each([
    [
      'a header block over Node’s limit',
      431,
      'request_headers_too_large',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
    ],
    ['a malformed request line', 400, 'malformed_http', 'GARBAGE\r\n\r\n'],
    ['a space in a header name', 400, 'malformed_http', 'GET / HTTP/1.1\r\nHost: x\r\nX Note: a\r\n\r\n'],
    [
      'Content-Length with Transfer-Encoding',
      400,
      'malformed_http',
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc',
    ],
    ['headers that never finish arriving', 408, 'request_timeout', 'GET / HTTP/1.1\r\nHost: x\r\n'],
    ['a body that never finishes arriving', 408, 'request_timeout', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc'],
  ])('%s: %d in the OpenAI shape, connection closed', async (_what, status, code, bytes) => {
    const res = parse(await sendBytes(port, bytes, 5_000));
    expect(res.status).toBe(status);
    expect(res.headers).toMatch(/^connection: close$/im);
    expect(res.headers).toMatch(/^content-type: application\/json/im);
    expect(expectOpenAIErrorShape(res.body).code).toBe(code);
  });

  it('writes nothing into a response already under way (a malformed request pipelined behind it)', async () => {
    const raw = await sendBytes(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n', 1_000);
    // Node drops the connection, and with it what of the 200 was not yet flushed; nothing else may appear.
    if (raw !== '') expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw).not.toContain('malformed_http');
  });

  it('writes nothing to a socket that is already gone', async () => {
    const client = connect(port, '127.0.0.1');
    await new Promise((r) => client.once('connect', r));
    const socket = serverSockets[serverSockets.length - 1];
    client.destroy();
    await new Promise((r) => socket.once('close', r));
    const written = socket.bytesWritten;
    clientErrorHandler(createLogger('silent'))(Object.assign(new Error('reset'), { code: 'HPE_INVALID_METHOD' }), socket);
    expect(socket.bytesWritten).toBe(written);
    expect(socket.destroyed).toBe(true);
  });
});
