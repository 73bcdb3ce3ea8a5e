/** HTTP as a misbehaving client speaks it: exact bytes over http.request, or a raw socket that bypasses Node's checks. */
import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Sends `body` as given (supertest would re-encode it) and collects the whole answer. */
export function send(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: Buffer | string; agent?: http.Agent } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'POST', headers: options.headers, agent: options.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Writes raw request bytes on a fresh socket and resolves with everything the server sent until it closed the
 * connection (or until `idleMs` of silence after something arrived). Node's http client refuses to send a header
 * with CR or LF in it; a socket does not.
 */
export function sendBytes(port: number, bytes: Buffer | string, idleMs = 1_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    });
    socket.on('close', finish);
    socket.on('error', finish);
    socket.write(bytes);
  });
}

/** The exact OpenAI error shape, `{"error": {"message", "type", "param", "code"}}` and nothing else, without a stack. */
export function expectOpenAIErrorShape(text: string): { message: string; type: string; param: string | null; code: string | null } {
  expect(text).not.toMatch(/\n\s+at /);
  const body = JSON.parse(text) as { error: { message: string; type: string; param: string | null; code: string | null } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(typeof body.error.message).toBe('string');
  expect(typeof body.error.type).toBe('string');
  expect(body.error.param === null || typeof body.error.param === 'string').toBe(true);
  expect(typeof body.error.code).toBe('string');
  return body.error;
}
