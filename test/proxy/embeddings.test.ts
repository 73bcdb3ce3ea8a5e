/** POST /v1/embeddings: relayed as it arrives, charged on input tokens alone at the input weight, reserved at the bound. */
import request from 'supertest';
import { TOKENS_PER_TEXT, embeddingsReply } from '../helpers/endpoint-replies';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { settled, MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

const EMBED = 'acme/model-1';
const body = (over: Record<string, unknown> = {}) => ({ model: EMBED, input: 'The food was delicious.', ...over });

describe.each(storeKinds)('embeddings (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    models: [
      { endpoints: ['chat'] },
      { endpoints: ['embeddings'], upstream_model: 'Acme/Embed-Base', quota_weight: { input: 2, output: 1 } },
    ],
  });
  const post = (secret: string, b: object) => request(t.proxy.url).post('/v1/embeddings').set('authorization', `Bearer ${secret}`).send(b);

  it.each(['vllm', 'openai'] as const)(
    'relays a %s-ordered answer cut in small pieces with only the model replaced, and charges input tokens at the input weight',
    async (order) => {
      t.upstream.behave(embeddingsReply({ order, dimensions: 64, pieceSize: 7 }));
      const key = await keyWithTokens(t.s.store, 10_000);
      const res = await post(key.secret, body({ input: ['one', 'two', 'three'] }));
      expect(res.status).toBe(200);
      expect(res.body.model).toBe(EMBED);
      expect(res.body.data).toHaveLength(3);
      expect(res.body.data[0].embedding).toHaveLength(64);
      expect(res.text).not.toContain('Acme/Embed-Base');
      expect(t.upstream.calls[0]).toMatchObject({ path: '/v1/embeddings', body: { model: 'Acme/Embed-Base' } });
      await settled(t.proxy);
      const prompt = 3 * TOKENS_PER_TEXT;
      expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000 - 2 * prompt, reserved: 0 });
      const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
      expect(record).toMatchObject({
        endpoint: 'embeddings',
        model: EMBED,
        promptTokens: prompt,
        completionTokens: 0,
        chargedTokens: 2 * prompt,
      });
    },
  );

  it('passes base64 vectors and dimensions through', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body({ encoding_format: 'base64', dimensions: 4 }));
    expect(res.status).toBe(200);
    expect(Buffer.from(res.body.data[0].embedding, 'base64')).toHaveLength(16);
    expect(t.upstream.calls[0].body).toMatchObject({ encoding_format: 'base64', dimensions: 4 });
  });

  it("reserves the inputs' bound: a balance below it is refused before the upstream is asked", async () => {
    // 3 token ids × input weight 2 = 6 tokens: 5 does not cover it.
    const poor = await keyWithTokens(t.s.store, 5);
    const res = await post(poor.secret, body({ input: [1, 2, 3] }));
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('insufficient_quota');
    expect(t.upstream.calls).toHaveLength(0);
  });

  it('charges our count of the inputs when the upstream reports no usage', async () => {
    t.upstream.behave(embeddingsReply({ usage: false }));
    const key = await keyWithTokens(t.s.store, 10_000);
    await post(key.secret, body({ input: [[1, 2, 3, 4, 5]] })).expect(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ promptTokens: 5, completionTokens: 0, chargedTokens: 10, estimated: true });
  });

  it.each([
    [{ input: '' }, 'input'],
    [{ input: [] }, 'input'],
    [{ input: ['a', [1, 2]] }, 'input'],
    [{ input: undefined }, 'input'],
    [{ encoding_format: 'int8' }, 'encoding_format'],
    [{ dimensions: 0 }, 'dimensions'],
  ])('refuses %j naming %s, forwarding and charging nothing', async (over, param) => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body(over));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(t.upstream.calls).toHaveLength(0);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0 });
  });

  it('refuses more than 2048 inputs in one request', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    const res = await post(key.secret, body({ input: Array.from({ length: 2049 }, () => 'x') }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'input', message: "Invalid 'input': must hold at most 2048 inputs." });
    expect(t.upstream.calls).toHaveLength(0);
  });

  it('refuses an input longer than the context window', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    const res = await post(key.secret, body({ input: [Array.from({ length: 9000 }, () => 1)] }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
  });

  it('refuses a chat model on /v1/embeddings and the embedding model on chat, naming model and endpoint', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const chatOnly = await post(key.secret, body({ model: MODEL }));
    expect(chatOnly.status).toBe(400);
    expect(chatOnly.body.error.message).toContain(`'${MODEL}' does not serve /v1/embeddings`);
    const embedOnly = await request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send({ model: EMBED, messages: [{ role: 'user', content: 'hi' }] });
    expect(embedOnly.status).toBe(400);
    expect(embedOnly.body.error.message).toContain(`'${EMBED}' does not serve /v1/chat/completions; it serves /v1/embeddings`);
    expect(t.upstream.calls).toHaveLength(0);
  });
});
