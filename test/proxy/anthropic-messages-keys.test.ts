/**
 * The key on the Messages API's routes: a 401 names both headers a key may come in (x-api-key and Bearer), and
 * /v1/messages/count_tokens, free as it is, keeps a key's model allow-list as /v1/messages does (permission_error,
 * nothing forwarded).
 */
import Anthropic from '@anthropic-ai/sdk';
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { messagesReply } from '../helpers/anthropic-upstream';

const MODEL = 'acme/claude-ish';
const OTHER = 'acme/other-claude';
const BODY = { model: MODEL, messages: [{ role: 'user' as const, content: 'Count me.' }] };

describe.each(storeKinds)('keys on the Messages API (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    models: [
      { id: MODEL, endpoints: ['messages'] },
      { id: OTHER, endpoints: ['messages'] },
    ],
  });
  const client = (secret: string) => new Anthropic({ apiKey: secret, baseURL: t.proxy.url, maxRetries: 0 });

  it.each([
    ['no key', {}],
    ['a malformed key', { 'x-api-key': 'not-a-key' }],
    ['an unknown key', { 'x-api-key': `sk-${'A'.repeat(40)}` }],
  ])('%s: a 401 authentication_error that names x-api-key and Bearer', async (_name, headers) => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const res = await request(t.proxy.url)
        .post(path)
        .set(headers as Record<string, string>)
        .send({ ...BODY, max_tokens: 10 });
      expect(res.status).toBe(401);
      expect(res.body.type).toBe('error');
      expect(res.body.error.type).toBe('authentication_error');
      expect(res.body.error.message).toContain('x-api-key');
      expect(res.body.error.message).toContain('Authorization: Bearer');
    }
    expect(t.upstream.calls).toHaveLength(0);
  });

  it('the OpenAI routes still name Bearer alone', async () => {
    const res = await request(t.proxy.url).post('/v1/chat/completions').send({});
    expect(res.status).toBe(401);
    expect(res.body.error.message).toContain('"Authorization: Bearer sk-..."');
    expect(res.body.error.message).not.toContain('x-api-key');
  });

  it('count_tokens for a model the key may not use: permission_error (403), nothing forwarded, nothing charged', async () => {
    t.upstream.behave(messagesReply({ inputTokens: 42 }));
    const key = await keyWithTokens(t.s.store, 1_000, { models: [OTHER] });
    const refused = await client(key.secret)
      .messages.countTokens(BODY)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    const raw = await request(t.proxy.url).post('/v1/messages/count_tokens').set('x-api-key', key.secret).send(BODY);
    expect(raw.status).toBe(403);
    expect(raw.body).toEqual({ type: 'error', error: { type: 'permission_error', message: expect.stringContaining(MODEL) } });
    // The same key as /v1/messages answers it, and the model it may use is counted.
    const create = await request(t.proxy.url)
      .post('/v1/messages')
      .set('x-api-key', key.secret)
      .send({ ...BODY, max_tokens: 10 });
    expect(create.status).toBe(403);
    expect(t.upstream.calls).toHaveLength(0);
    expect(await client(key.secret).messages.countTokens({ ...BODY, model: OTHER })).toEqual({ input_tokens: 42 });
    expect(t.upstream.calls).toHaveLength(1);
    await settled(t.proxy);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(1_000);
  });
});
