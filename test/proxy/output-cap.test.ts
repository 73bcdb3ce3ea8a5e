/**
 * No output cap field escapes the reservation: whatever caps a client names, every field an upstream may read as one
 * carries at most what was reserved; an upstream that produces more anyway is charged, counted and alerted on.
 */
import request from 'supertest';
import { buildCatalog } from '../../src/catalog/models';
import { completionsReply, responsesReply } from '../helpers/endpoint-replies';
import { proxyFixture, type ProxyFixture } from '../helpers/fixture';
import { chatBody, MODEL, settled, startProxy, type ProxyUnderTest } from '../helpers/proxy';
import { keyWithTokens, makeStore, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { jsonReply, startUpstream, words, type Behaviour, type TestUpstream } from '../helpers/upstream';

/** As many tokens as asked for, up to 5,000. */
const PLENTY = words(5000);

/** An upstream that reads `field` before the endpoint's own cap (llama.cpp's `n_predict`, a server reading `max_tokens`). */
function readingFirst(field: string, own: string, reply: Behaviour): Behaviour {
  return (call, req, res) => {
    if (call.body[field] !== undefined) call.body[own] = call.body[field];
    return reply(call, req, res);
  };
}

/** Per endpoint: its path, a body naming both the endpoint's cap and another the upstream honours, and that upstream. */
const ATTACKS = [
  {
    endpoint: 'chat',
    path: '/v1/chat/completions',
    body: chatBody({ max_tokens: 4000, max_completion_tokens: 4000 }),
    // The test upstream reads max_tokens first, as vLLM, Ollama and llama.cpp do.
    upstream: jsonReply({ tokens: PLENTY }),
  },
  {
    endpoint: 'completions',
    path: '/v1/completions',
    body: { model: MODEL, prompt: 'Say hello.', max_tokens: 4000, n_predict: 4000 },
    // Its prompt count at or below ours: a prompt the upstream counts longer may overdraw by that, once (README).
    upstream: readingFirst('n_predict', 'max_tokens', completionsReply({ tokens: PLENTY, promptTokens: 1 })),
  },
  {
    endpoint: 'responses',
    path: '/v1/responses',
    body: { model: MODEL, input: 'Say hello.', max_output_tokens: 4000, max_tokens: 4000 },
    upstream: readingFirst('max_tokens', 'max_output_tokens', responsesReply({ tokens: PLENTY })),
  },
] as const;

const MODELS = [{ context_length: 8192, max_output_tokens: 4096 }];

async function overrun(t: ProxyFixture, labels: string): Promise<number> {
  const text = await t.proxy.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`tokenmeter_output_overrun_tokens_total{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe.each(storeKinds)('output caps (%s store)', (kind) => {
  const t = proxyFixture(kind, { models: MODELS });

  describe.each(ATTACKS)('$endpoint', ({ endpoint, path, body, upstream }) => {
    it('spending past the balance with two cap fields: a key holding 1,000 tokens ends at or above 0', async () => {
      t.upstream.behave(upstream);
      const key = await keyWithTokens(t.s.store, 1_000);
      const res = await request(t.proxy.url).post(path).set('authorization', `Bearer ${key.secret}`).send(body);
      expect(res.status).toBe(200);
      await settled(t.proxy);
      expect((await t.s.store.getKey(key.id))!.balance).toBeGreaterThanOrEqual(0);
      expect(await overrun(t, `model="${MODEL}",endpoint="${endpoint}"`)).toBe(0);
    });

    it('spending past the balance with two cap fields, 20 at once: the key still ends at or above 0', async () => {
      t.upstream.behave(upstream);
      const key = await keyWithTokens(t.s.store, 1_000);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => request(t.proxy.url).post(path).set('authorization', `Bearer ${key.secret}`).send(body)),
      );
      expect(answers.some((r) => r.status === 200)).toBe(true);
      await settled(t.proxy);
      expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0 });
      expect((await t.s.store.getKey(key.id))!.balance).toBeGreaterThanOrEqual(0);
      expect(await overrun(t, `model="${MODEL}",endpoint="${endpoint}"`)).toBe(0);
    });
  });

  it("reserves for the smaller of a chat request's two caps, and sends that in both", async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    await request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(chatBody({ max_tokens: 3, max_completion_tokens: 4000, n_predict: 4000, max_new_tokens: 4000, num_predict: 4000 }))
      .expect(200);
    const sent = t.upstream.calls[0].body;
    expect(sent).toMatchObject({ max_tokens: 3, max_completion_tokens: 3 });
    for (const field of ['n_predict', 'max_new_tokens', 'num_predict']) expect(sent).not.toHaveProperty(field);
  });

  it('counts completion tokens an upstream produced past the reservation, and charges them', async () => {
    // An upstream that reads no cap we write: it produces 50 tokens whatever it is asked.
    t.upstream.behave((call, req, res) => {
      delete call.body.max_tokens;
      delete call.body.max_completion_tokens;
      return jsonReply({ tokens: words(50) })(call, req, res);
    });
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(chatBody({ max_tokens: 10 }));
    expect(res.status).toBe(200);
    await settled(t.proxy);
    expect(await overrun(t, `model="${MODEL}",endpoint="chat"`)).toBe(40);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record.completionTokens).toBe(50);
  });
});

describe('output_cap_fields in the models file', () => {
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;
  beforeEach(async () => {
    s = await makeStore('memory');
    upstream = await startUpstream();
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: upstream.url,
      upstreams: [
        {
          name: 'llama',
          url: upstream.url,
          output_cap_fields: { chat: ['max_completion_tokens'], completions: ['max_tokens', 'n_predict'] },
        },
      ],
      models: [
        { upstream: 'llama', max_output_tokens: 4096 },
        { upstream: 'llama', max_output_tokens: 4096, output_cap_fields: { chat: ['max_tokens'] } },
      ],
    });
  });
  afterEach(async () => {
    await proxy.close();
    await upstream.close();
    await s.close();
  });

  it("writes the allowance into the fields named for the upstream (the model's own first) and removes every other cap", async () => {
    const key = await keyWithTokens(s.store, 100_000);
    const post = async (path: string, body: Record<string, unknown>) => {
      await request(proxy.url).post(path).set('authorization', `Bearer ${key.secret}`).send(body).expect(200);
      return upstream.calls.at(-1)!.body;
    };

    const chat = await post('/v1/chat/completions', chatBody({ max_tokens: 4000, max_completion_tokens: 20 }));
    expect(chat.max_completion_tokens).toBe(20);
    expect(chat).not.toHaveProperty('max_tokens');

    // llama.cpp's n_predict of -1 is "no limit": it gets the allowance like max_tokens.
    expect(await post('/v1/completions', { model: MODEL, prompt: 'Say hello.', max_tokens: 30, n_predict: -1 })).toMatchObject({
      max_tokens: 30,
      n_predict: 30,
    });

    const own = await post('/v1/chat/completions', chatBody({ model: 'acme/model-1', max_completion_tokens: 40 }));
    expect(own.max_tokens).toBe(40);
    expect(own).not.toHaveProperty('max_completion_tokens');
  });

  it('refuses a models file naming no field, or an endpoint without output', () => {
    const defaults = { upstreamUrl: 'http://127.0.0.1:1/v1', upstreamApiKey: undefined, env: {} };
    const model = { id: 'acme/m', context_length: 100, max_output_tokens: 10 };
    expect(() => buildCatalog({ models: [{ ...model, output_cap_fields: { chat: [] } }] }, defaults)).toThrow(
      'models file: models[0].output_cap_fields.chat (acme/m): must name at least one field',
    );
    expect(() => buildCatalog({ models: [{ ...model, output_cap_fields: { embeddings: ['max_tokens'] } }] }, defaults)).toThrow(
      'models file: models[0].output_cap_fields.embeddings (acme/m): is not a known field',
    );
  });
});
