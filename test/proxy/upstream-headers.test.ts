/**
 * The headers a request carries upstream, by allow-list: the client cannot steer the operator's key to another
 * organisation or project, nor tell the upstream who it is; our X-Forwarded-For says what TRUST_PROXY accepts.
 */
import request from 'supertest';
import { ConfigError, loadConfig } from '../../src/config/config';
import { proxyFixture } from '../helpers/fixture';
import { chatBody, MODEL } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import type { ProxyFixture } from '../helpers/fixture';

/** What a client might send to steer the operator's account or claim another address. */
const STEERING = {
  'openai-organization': 'org-of-the-client',
  'openai-project': 'proj-of-the-client',
  'x-forwarded-for': '6.6.6.6',
  'x-real-ip': '6.6.6.6',
  forwarded: 'for=6.6.6.6',
  'x-custom': 'anything',
};

/** A chat completion, then the stored response's GET: the two ways a client's request goes upstream. */
async function bothRoutes(t: ProxyFixture, headers: Record<string, string>) {
  const key = await keyWithTokens(t.s.store, 10_000);
  const send = <T extends request.Test>(r: T): T => r.set('authorization', `Bearer ${key.secret}`).set(headers);
  await send(request(t.proxy.url).post('/v1/chat/completions')).send(chatBody()).expect(200);
  const made = await send(request(t.proxy.url).post('/v1/responses')).send({ model: MODEL, input: 'Say hello.' }).expect(200);
  await send(request(t.proxy.url).get(`/v1/responses/${made.body.id}`)).expect(200);
  expect(t.upstream.calls).toHaveLength(3);
  return t.upstream.calls.map((c) => c.headers);
}

describe('headers upstream, without TRUST_PROXY', () => {
  const t = proxyFixture('memory', { env: { UPSTREAM_API_KEY: 'operator-key' } });

  it("org/project steering: a client's OpenAI-Organization and OpenAI-Project never reach the upstream beside the operator's key", async () => {
    for (const got of await bothRoutes(t, STEERING)) {
      expect(got.authorization).toBe('Bearer operator-key');
      expect(got['openai-organization']).toBeUndefined();
      expect(got['openai-project']).toBeUndefined();
      expect(got['x-custom']).toBeUndefined();
    }
  });

  it("address spoofing: the client's X-Forwarded-For, X-Real-IP and Forwarded are replaced by the socket's address", async () => {
    for (const got of await bothRoutes(t, { ...STEERING, accept: 'application/json' })) {
      expect(got['x-forwarded-for']).toBe('127.0.0.1');
      expect(got['x-real-ip']).toBeUndefined();
      expect(got.forwarded).toBeUndefined();
      expect(got.accept).toBe('application/json');
    }
  });
});

describe('headers upstream, behind a trusted proxy (TRUST_PROXY=loopback)', () => {
  const t = proxyFixture('memory', { env: { TRUST_PROXY: 'loopback' } });

  it('address spoofing through a trusted proxy: X-Forwarded-For keeps the client the proxy saw, not what the client claimed before it', async () => {
    // The proxy on loopback appended 7.7.7.7, the address it saw; 6.6.6.6 is the client's own claim.
    for (const got of await bothRoutes(t, { 'x-forwarded-for': '6.6.6.6, 7.7.7.7', 'x-real-ip': '6.6.6.6' })) {
      expect(got['x-forwarded-for']).toBe('7.7.7.7, 127.0.0.1');
      expect(got['x-real-ip']).toBeUndefined();
    }
  });
});

describe('UPSTREAM_FORWARD_HEADERS', () => {
  const t = proxyFixture('memory', { env: { UPSTREAM_FORWARD_HEADERS: 'OpenAI-Beta, x-trace-id' } });

  it('forwards the headers the operator names, as the client sent them, and no other', async () => {
    for (const got of await bothRoutes(t, { ...STEERING, 'openai-beta': 'assistants=v2', 'x-trace-id': 't-1' })) {
      expect(got['openai-beta']).toBe('assistants=v2');
      expect(got['x-trace-id']).toBe('t-1');
      expect(got['openai-organization']).toBeUndefined();
      expect(got['x-custom']).toBeUndefined();
    }
  });

  it('refuses at start a name that is ours to set or a credential', () => {
    for (const name of ['Authorization', 'x-forwarded-for', 'forwarded', 'cookie', 'connection']) {
      expect(() => loadConfig({ UPSTREAM_FORWARD_HEADERS: `openai-beta, ${name}` })).toThrow(
        new ConfigError(`invalid configuration: UPSTREAM_FORWARD_HEADERS: ${name.toLowerCase()} is never forwarded upstream`),
      );
    }
    expect(() => loadConfig({ UPSTREAM_FORWARD_HEADERS: 'a header' })).toThrow('must be header names, comma-separated');
    expect(loadConfig({}).upstreamForwardHeaders).toBeUndefined();
  });
});
