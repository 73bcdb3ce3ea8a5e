/** The model catalog at work: capability refusals, developer mapping, weights, two upstreams, /v1/models, reload. */
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import request from 'supertest';
import { stringify } from 'yaml';
import { makeStore, keyWithTokens, type StoreUnderTest } from '../helpers/stores';
import { startUpstream, PROMPT_TOKENS, words, streamReply, type TestUpstream } from '../helpers/upstream';
import { startProxy, settled, chatBody, MODEL, UPSTREAM_MODEL, type ProxyUnderTest } from '../helpers/proxy';
import { writeModelsFile } from '../helpers/models-file';
import { ModelsFile } from '../../src/catalog/models';
import { countText } from '../../src/metering/estimate';

const LIMITED = 'acme/limited';
const WEIGHTED = 'acme/weighted';
const MAPPED = 'acme/mapped';
const OTHER = 'other/on-second-upstream';

describe('model catalog (redis store)', () => {
  let s: StoreUnderTest;
  let up1: TestUpstream;
  let up2: TestUpstream;
  let proxy: ProxyUnderTest;
  let key: { id: string; secret: string };
  const post = (body: object, secret = key.secret) =>
    request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(body);

  beforeEach(async () => {
    s = await makeStore('redis');
    up1 = await startUpstream();
    up2 = await startUpstream();
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: up1.url,
      env: { UPSTREAM_API_KEY: 'key-one', SECOND_KEY: 'key-two' },
      upstreams: [{ name: 'second', url: up2.url, api_key_env: 'SECOND_KEY' }],
      models: [
        { pricing: { input: 0.1, output: 0.3, currency: 'USD' } },
        {
          id: LIMITED,
          capabilities: {
            tools: false,
            json_mode: false,
            vision: false,
            developer_role: false,
            sampling_parameters: ['temperature', 'seed'],
          },
        },
        { id: WEIGHTED, quota_weight: { input: 2, output: 3 } },
        { id: MAPPED, capabilities: { developer_role: 'system' } },
        { id: OTHER, upstream: 'second', upstream_model: 'second-model' },
        { id: 'acme/no-usage', stream_include_usage: false },
      ],
    });
    key = await keyWithTokens(s.store, 100_000);
  });
  afterEach(async () => {
    await proxy.close();
    await up1.close();
    await up2.close();
    await s.close();
  });

  describe('capabilities are enforced before forwarding', () => {
    it.each([
      ['tools', { tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }, /does not support tools/],
      ['tool_choice', { tool_choice: 'required' }, /does not support tools/],
      ['response_format', { response_format: { type: 'json_object' } }, /does not support JSON mode/],
      [
        'response_format',
        { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } },
        /does not support JSON mode/,
      ],
      [
        'messages[0].content[1]',
        {
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is this?' },
                { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
              ],
            },
          ],
        },
        /does not accept image input/,
      ],
      [
        'messages[0].role',
        {
          messages: [
            { role: 'developer', content: 'be brief' },
            { role: 'user', content: 'hi' },
          ],
        },
        /does not support 'developer' messages/,
      ],
      ['top_p', { top_p: 0.5 }, /does not accept 'top_p'; it accepts: temperature, seed/],
      ['presence_penalty', { presence_penalty: 0.5 }, /does not accept 'presence_penalty'/],
    ])('refuses %s with a 400 naming it', async (param, over, message) => {
      const res = await post(chatBody({ model: LIMITED, ...over }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request_error', param });
      expect(res.body.error.message).toMatch(message);
      expect(up1.calls).toHaveLength(0);
      expect(await s.store.getKey(key.id)).toMatchObject({ balance: 100_000, reserved: 0 });
    });

    it('lets through what the model accepts, and text-only or "none" tool settings', async () => {
      await post(chatBody({ model: LIMITED, temperature: 0.3, seed: 1, response_format: { type: 'text' }, tool_choice: 'none' })).expect(
        200,
      );
      expect(up1.calls).toHaveLength(1);
    });

    it('sends developer messages upstream as system where the model file says so', async () => {
      await post(
        chatBody({
          model: MAPPED,
          messages: [
            { role: 'developer', content: 'be brief' },
            { role: 'user', content: 'hi' },
          ],
        }),
      ).expect(200);
      expect(up1.calls[0].body.messages).toEqual([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ]);
    });
  });

  describe('weighted charging', () => {
    it('charges prompt × input weight + completion × output weight, JSON and stream, and the ledger shows both', async () => {
      await post(chatBody({ model: WEIGHTED })).expect(200);
      await post(chatBody({ model: WEIGHTED, stream: true })).expect(200);
      await settled(proxy);
      const ledger = await s.store.usage({ keyId: key.id, limit: 10 });
      expect(ledger.map((r) => [r.promptTokens, r.completionTokens, r.chargedTokens, r.stream])).toEqual([
        [PROMPT_TOKENS, 5, PROMPT_TOKENS * 2 + 5 * 3, false],
        [PROMPT_TOKENS, 5, PROMPT_TOKENS * 2 + 5 * 3, true],
      ]);
      expect((await s.store.getKey(key.id))!.balance).toBe(100_000 - 2 * (PROMPT_TOKENS * 2 + 15));
    });

    it('reserves with the weights too: a balance that covers the raw tokens but not the weighted ones is lowered', async () => {
      const poor = await keyWithTokens(s.store, 60);
      await post(chatBody({ model: WEIGHTED, max_tokens: 100 }), poor.secret).expect(200);
      // prompt estimate ~10 × 2 = 20 reserved, the rest buys (60 - 20) / 3 = 13 completion tokens.
      expect(up1.calls[0].body.max_tokens).toBeLessThanOrEqual(14);
      await settled(proxy);
      expect((await s.store.getKey(poor.id))!.balance).toBeGreaterThanOrEqual(0);
    });
  });

  describe('several upstreams', () => {
    it('routes each model to its own upstream with its own key, side by side', async () => {
      const results = await Promise.all([
        post(chatBody()),
        post(chatBody({ model: OTHER })),
        post(chatBody({ stream: true, model: OTHER })),
        post(chatBody()),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(up1.calls.map((c) => [c.body.model, c.headers.authorization])).toEqual([
        [UPSTREAM_MODEL, 'Bearer key-one'],
        [UPSTREAM_MODEL, 'Bearer key-one'],
      ]);
      expect(up2.calls.map((c) => [c.body.model, c.headers.authorization])).toEqual([
        ['second-model', 'Bearer key-two'],
        ['second-model', 'Bearer key-two'],
      ]);
      expect(results[1].body.model).toBe(OTHER);
    });
  });

  describe('stream usage switch', () => {
    it('sends no stream_options to a model that has it off, and meters with the tokenizer', async () => {
      up1.behave(streamReply({ tokens: ['Hi', ' there'] }));
      const res = await post(chatBody({ model: 'acme/no-usage', stream: true, stream_options: { include_usage: true } }));
      expect(res.status).toBe(200);
      expect(up1.calls[0].body.stream_options).toEqual({ include_usage: true }); // the client's own, untouched
      await post(chatBody({ model: 'acme/no-usage', stream: true })).expect(200);
      expect(up1.calls[1].body.stream_options).toBeUndefined();
      await settled(proxy);
      const [, second] = await s.store.usage({ keyId: key.id, limit: 10 });
      expect(second).toMatchObject({ estimated: true, completionTokens: countText('Hi there') });
    });
  });

  describe('GET /v1/models', () => {
    it('works with the official SDK: list and retrieve, with our extra fields', async () => {
      const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
      const ids: string[] = [];
      for await (const m of client.models.list()) ids.push(m.id);
      expect(ids).toEqual([MODEL, LIMITED, WEIGHTED, MAPPED, OTHER, 'acme/no-usage']);
      const one = (await client.models.retrieve(MODEL)) as OpenAI.Model & Record<string, unknown>;
      expect(one).toMatchObject({
        id: MODEL,
        object: 'model',
        owned_by: 'acme',
        context_length: 8192,
        max_output_tokens: 1024,
        capabilities: { tools: true, json_mode: true, vision: true, developer_role: true },
        quota_weight: { input: 1, cached_input: 1, output: 1 },
        pricing: { input: 0.1, output: 0.3, currency: 'USD', unit: 'per_million_tokens' },
      });
      // What one token draws from a package, as the models file weighs it: this model drains one 2 and 3 times as fast.
      const weighted = (await client.models.retrieve(WEIGHTED)) as OpenAI.Model & Record<string, unknown>;
      expect(weighted.quota_weight).toEqual({ input: 2, cached_input: 2, output: 3 });
      const limited = (await client.models.retrieve(LIMITED)) as OpenAI.Model & Record<string, any>;
      expect(limited.capabilities).toEqual({
        tools: false,
        json_mode: false,
        vision: false,
        developer_role: false,
        sampling_parameters: ['temperature', 'seed'],
      });
      await expect(client.models.retrieve('acme/none')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('shows a restricted key only its models', async () => {
      const restricted = await keyWithTokens(s.store, 10, { models: [OTHER] });
      const list = await request(proxy.url).get('/v1/models').set('authorization', `Bearer ${restricted.secret}`);
      expect(list.body).toEqual({ object: 'list', data: [expect.objectContaining({ id: OTHER })] });
      const hidden = await request(proxy.url).get(`/v1/models/${MODEL}`).set('authorization', `Bearer ${restricted.secret}`);
      expect(hidden.status).toBe(404);
      expect(hidden.body.error.code).toBe('model_not_found');
    });

    it('needs a valid, unrevoked key', async () => {
      expect((await request(proxy.url).get('/v1/models')).status).toBe(401);
      await s.store.revokeKey(key.id);
      const res = await request(proxy.url).get('/v1/models').set('authorization', `Bearer ${key.secret}`);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_api_key');
    });
  });
});

describe('reloading the models file', () => {
  const entry = (id: string) => ({ id, upstream_model: UPSTREAM_MODEL, context_length: 8192, max_output_tokens: 64 });

  it('under load loses no request, serves the new model after, and refuses a bad file keeping the old', async () => {
    const s = await makeStore('redis');
    const upstream = await startUpstream(streamReply({ tokens: words(20), delayMs: 5 }));
    const file = writeModelsFile([entry(MODEL)]);
    const modelsFile = new ModelsFile(file, { upstreamUrl: upstream.url, upstreamApiKey: undefined, env: {} });
    const proxy = await startProxy({
      store: s.store,
      upstreamUrl: upstream.url,
      modelsFile,
      env: { ADMIN_TOKEN: 'reload-admin-token-123' },
    });
    try {
      const key = await keyWithTokens(s.store, 1_000_000);
      const send = () =>
        request(proxy.url)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${key.secret}`)
          .send(chatBody({ stream: true }));
      const inFlight = Array.from({ length: 60 }, send);
      for (let i = 0; i < 5; i++) {
        writeFileSync(file, stringify({ models: [entry(MODEL), entry(`acme/new-${i}`)] }));
        const r = await request(proxy.url).post('/admin/models/reload').set('authorization', 'Bearer reload-admin-token-123');
        expect(r.body).toEqual({ reloaded: true, models: 2 });
      }
      const results = await Promise.all(inFlight);
      expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
      expect(results.every((r) => r.text.endsWith('data: [DONE]\n\n'))).toBe(true);
      await request(proxy.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key.secret}`)
        .send(chatBody({ model: 'acme/new-4', stream: true }))
        .expect(200);

      writeFileSync(file, 'models: [broken\n');
      const refused = await request(proxy.url).post('/admin/models/reload').set('authorization', 'Bearer reload-admin-token-123');
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(/refused; the old catalog stays: .*not valid YAML/);
      await request(proxy.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key.secret}`)
        .send(chatBody({ model: 'acme/new-4', stream: true }))
        .expect(200);
      await settled(proxy);
      expect(await s.store.usage({ keyId: key.id, limit: 1000 })).toHaveLength(62);
    } finally {
      await proxy.close();
      await upstream.close();
      await s.close();
    }
  });
});
