/** Every bad request gets an OpenAI-shaped error with the right status, reaches no upstream, and costs nothing. */
import http from 'node:http';
import request from 'supertest';
import Redis from 'ioredis';
import { makeStore, keyWithTokens, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';
import { startProxy, chatBody, MODEL, type ProxyUnderTest } from '../helpers/proxy';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import { generateKey } from '../../src/http/keys';
import { claimPort } from '../helpers/ports';

/** Sends exact bytes (supertest would re-encode a Buffer body). */
function rawPost(url: string, secret: string, bytes: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/chat/completions`,
      { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

function expectOpenAIError(body: any, code: string, param?: string | null): void {
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message).not.toMatch(/\n\s+at /); // no stack trace
  if (param !== undefined) expect(body.error.param).toBe(param);
}

describe.each(storeKinds)('refusals (%s store)', (kind) => {
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;
  let key: { id: string; secret: string };
  const post = (body: unknown, secret = key.secret) =>
    request(proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${secret}`)
      .send(body as object);

  beforeEach(async () => {
    s = await makeStore(kind);
    upstream = await startUpstream();
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: upstream.url,
      models: [{}, { id: 'acme/other' }],
      env: { BODY_LIMIT: '64kb' },
    });
    key = await keyWithTokens(s.store, 5_000);
  });
  afterEach(async () => {
    // Nothing refused may reach the upstream, charge the key or leave a reservation behind.
    expect(upstream.calls).toHaveLength(0);
    expect(await s.store.getKey(key.id)).toMatchObject({ balance: 5_000, reserved: 0 });
    await proxy.close();
    await upstream.close();
    await s.close();
  });

  describe('authentication: 401 invalid_api_key', () => {
    it('without an Authorization header', async () => {
      const res = await request(proxy.url).post('/v1/chat/completions').send(chatBody());
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expectOpenAIError(res.body, 'invalid_api_key');
    });

    it.each([
      ['a non-Bearer scheme', (k: string) => `Basic ${k}`],
      ['a malformed key', () => 'Bearer sk-short'],
      ['a well-formed unknown key', () => `Bearer ${generateKey().secret}`],
      ['two Authorization values', (k: string) => `Bearer ${k}, Bearer ${k}`],
    ])('with %s', async (_what, header) => {
      const res = await request(proxy.url).post('/v1/chat/completions').set('authorization', header(key.secret)).send(chatBody());
      expect(res.status).toBe(401);
      expectOpenAIError(res.body, 'invalid_api_key');
    });

    it('with a revoked key, at once', async () => {
      await post(chatBody({ max_tokens: 'x' })).expect(400); // the key id is now cached by the proxy
      const other = await keyWithTokens(s.store, 100);
      await s.store.revokeKey(other.id);
      const res = await post(chatBody(), other.secret);
      expect(res.status).toBe(401);
      expectOpenAIError(res.body, 'invalid_api_key');
      expect(res.body.error.message).toContain('revoked');
    });

    it('a disabled account’s key is refused everywhere: completions, /v1/models, /v1/models/{id}, stored responses', async () => {
      const other = await keyWithTokens(s.store, 100);
      await s.store.updateAccount(other.accountId, { status: 'disabled' });
      const auth = `Bearer ${other.secret}`;
      for (const res of [
        await post(chatBody(), other.secret),
        await request(proxy.url).get('/v1/models').set('authorization', auth),
        await request(proxy.url).get(`/v1/models/${MODEL}`).set('authorization', auth),
        await request(proxy.url).get('/v1/responses/resp_123').set('authorization', auth),
      ]) {
        expect(res.status).toBe(401);
        expectOpenAIError(res.body, 'invalid_api_key');
        expect(res.body.error.message).toContain('disabled');
      }
    });

    it('with an expired key', async () => {
      const old = await keyWithTokens(s.store, 100, { expiresAt: Math.floor(Date.now() / 1000) - 5 });
      const res = await post(chatBody(), old.secret);
      expect(res.status).toBe(401);
      expect(res.body.error.message).toContain('expired');
    });
  });

  describe('the body: 400 with the offending param', () => {
    it.each([
      ['model', { model: undefined }],
      ['model', { model: 5 }],
      ['messages', { messages: undefined }],
      ['messages', { messages: 'hi' }],
      ['messages', { messages: [] }],
      ['messages[0].role', { messages: [{ role: 'robot', content: 'hi' }] }],
      ['messages[0].content', { messages: [{ role: 'user', content: 5 }] }],
      ['messages[0].content', { messages: [{ role: 'user' }] }],
      [
        'messages[1].content[0].type',
        {
          messages: [
            { role: 'system', content: 'x' },
            { role: 'user', content: [{ text: 'hi' }] },
          ],
        },
      ],
      ['temperature', { temperature: 2.5 }],
      ['temperature', { temperature: -0.1 }],
      ['temperature', { temperature: '1' }],
      ['top_p', { top_p: 1.01 }],
      ['frequency_penalty', { frequency_penalty: -2.01 }],
      ['presence_penalty', { presence_penalty: 3 }],
      ['max_tokens', { max_tokens: 0 }],
      ['max_tokens', { max_tokens: 1.5 }],
      ['max_tokens', { max_tokens: '10' }],
      ['max_completion_tokens', { max_completion_tokens: -1 }],
      ['n', { n: 0 }],
      ['stream', { stream: 'yes' }],
      ['stream_options.include_usage', { stream_options: { include_usage: 'yes' } }],
      ['response_format', { response_format: 'json' }],
      ['tools', { tools: { type: 'function' } }],
      ['tool_choice', { tool_choice: 5 }],
    ])('%s', async (param, over) => {
      const res = await post(chatBody(over));
      expect(res.status).toBe(400);
      expectOpenAIError(res.body, 'invalid_request_error', param);
    });

    it('a body that is not an object', async () => {
      const res = await post([chatBody()]);
      expect(res.status).toBe(400);
      expectOpenAIError(res.body, 'invalid_request_error', null);
    });

    it('malformed JSON', async () => {
      const res = await request(proxy.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key.secret}`)
        .set('content-type', 'application/json')
        .send('{"model": ');
      expect(res.status).toBe(400);
      expectOpenAIError(res.body, 'invalid_json');
    });

    it('a body that is not valid UTF-8', async () => {
      const bytes = Buffer.concat([Buffer.from('{"model":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","messages":[]}')]);
      const res = await rawPost(proxy.url, key.secret, bytes);
      expect(res.status).toBe(400);
      expectOpenAIError(res.body, 'invalid_json');
    });

    it('a body over BODY_LIMIT: 413', async () => {
      const res = await post(chatBody({ messages: [{ role: 'user', content: 'x'.repeat(70_000) }] }));
      expect(res.status).toBe(413);
      expectOpenAIError(res.body, 'request_too_large');
    });

    it('max_tokens above the model output limit', async () => {
      const res = await post(chatBody({ max_tokens: 5000 }));
      expect(res.status).toBe(400);
      expectOpenAIError(res.body, 'invalid_request_error', 'max_tokens');
    });

    it('a prompt plus max_tokens beyond the context length', async () => {
      const res = await post(chatBody({ max_tokens: 1000, messages: [{ role: 'user', content: 'lorem ipsum '.repeat(3700) }] }));
      expect(res.status).toBe(400);
      expectOpenAIError(res.body, 'context_length_exceeded', 'max_tokens');
    });
  });

  describe('models and routes', () => {
    it('an unknown model: 404 model_not_found', async () => {
      const res = await post(chatBody({ model: 'acme/nope' }));
      expect(res.status).toBe(404);
      expectOpenAIError(res.body, 'model_not_found', 'model');
    });

    it('a model outside the key’s list: 403 model_not_allowed', async () => {
      const limited = await keyWithTokens(s.store, 100, { models: [MODEL] });
      const res = await post(chatBody({ model: 'acme/other' }), limited.secret);
      expect(res.status).toBe(403);
      expectOpenAIError(res.body, 'model_not_allowed', 'model');
    });

    it('an unknown route: 404, and GET on the completions route: 405', async () => {
      const missing = await request(proxy.url).get('/v1/nothing');
      expect(missing.status).toBe(404);
      expectOpenAIError(missing.body, 'not_found');
      const wrong = await request(proxy.url).get('/v1/chat/completions');
      expect(wrong.status).toBe(405);
      expectOpenAIError(wrong.body, 'method_not_allowed');
    });
  });
});

describe('fail closed: the store is unreachable', () => {
  it('answers 503 store_unavailable and forwards nothing; /readyz says not ready', async () => {
    const upstream = await startUpstream();
    const port = await claimPort();
    const client = new Redis(`redis://127.0.0.1:${port}`, redisClientOptions(500));
    client.on('error', () => {});
    const store = new RedisStore(client, { prefix: 'down:' });
    const proxy = await startProxy({ store, upstreamUrl: upstream.url });
    try {
      const res = await request(proxy.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${generateKey().secret}`)
        .send(chatBody());
      expect(res.status).toBe(503);
      expectOpenAIError(res.body, 'store_unavailable');
      expect(upstream.calls).toHaveLength(0);
      const ready = await request(proxy.url).get('/readyz');
      expect(ready.status).toBe(503);
      expect((await request(proxy.url).get('/healthz')).status).toBe(200);
    } finally {
      await proxy.close();
      await store.close();
      await upstream.close();
    }
  });
});
