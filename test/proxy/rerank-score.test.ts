/**
 * POST /v1/rerank and /v1/score, against vLLM-shaped and llama.cpp-shaped upstreams: each charged the usage it reports
 * (`total_tokens` alone from vLLM's rerank, `prompt_tokens` from the others) at the input weight, under the client's
 * model name; a pair longer than the model's context refused before anything is reserved or sent.
 */
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import type { Behaviour } from '../helpers/upstream';

const MODEL = 'acme/reranker';

/** An answer as the upstream writes it, under its own model name. */
const reply =
  (body: (call: { body: Record<string, any> }) => Record<string, unknown>): Behaviour =>
  (call, _req, res) => {
    const text = JSON.stringify({ model: 'Vendor/Reranker-v2', ...body(call) });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

const results = (call: { body: Record<string, any> }) =>
  (call.body.documents as unknown[]).map((_, index) => ({ index, relevance_score: 1 / (index + 1) }));
/** vLLM's rerank: `usage.total_tokens` alone. */
const vllmRerank = reply((call) => ({ id: 'rerank-1', results: results(call), usage: { total_tokens: 21 } }));
/** llama.cpp's rerank: `prompt_tokens` and `total_tokens`. */
const llamaRerank = reply((call) => ({ object: 'list', results: results(call), usage: { prompt_tokens: 17, total_tokens: 17 } }));
/** vLLM's score. */
const vllmScore = reply(() => ({
  id: 'score-1',
  object: 'list',
  data: [{ index: 0, object: 'score', score: 0.5 }],
  usage: { prompt_tokens: 12, total_tokens: 12 },
}));

describe.each(storeKinds)('rerank and score (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    models: [
      {},
      {
        id: MODEL,
        upstream_model: 'Vendor/Reranker-v2',
        endpoints: ['rerank', 'score'],
        context_length: 64,
        max_output_tokens: undefined,
        quota_weight: { input: 2 },
      },
    ],
  });
  const post = (path: string, secret: string, body: object) =>
    request(t.proxy.url)
      .post(path)
      .set('authorization', `Bearer ${secret}`)
      .send({ model: MODEL, ...body });
  const RERANK = { query: 'capital of France', documents: ['Paris is the capital.', { text: 'Berlin is in Germany.' }] };

  it.each([
    ['vLLM', vllmRerank, 21],
    ['llama.cpp', llamaRerank, 17],
  ])("/v1/rerank against %s is charged its usage at the input weight, under the client's model name", async (_name, behaviour, tokens) => {
    t.upstream.behave(behaviour);
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post('/v1/rerank', key.secret, RERANK).expect(200);
    expect(res.body.model).toBe(MODEL);
    expect(res.body.results).toHaveLength(2);
    expect(t.upstream.calls[0]).toMatchObject({ path: '/v1/rerank', body: { model: 'Vendor/Reranker-v2' } });
    expect(res.headers['x-tokenmeter-charged-tokens']).toBe(String(tokens * 2));
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({
      endpoint: 'rerank',
      promptTokens: tokens,
      completionTokens: 0,
      chargedTokens: tokens * 2,
      estimated: false,
    });
  });

  it('/v1/score against vLLM is charged its usage', async () => {
    t.upstream.behave(vllmScore);
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post('/v1/score', key.secret, { text_1: 'What is the capital of France?', text_2: ['Paris.'] }).expect(200);
    expect(res.body.model).toBe(MODEL);
    await settled(t.proxy);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(10_000 - 24);
  });

  it('refuses a pair longer than the context, and an upstream without usage is charged our count', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const long = await post('/v1/rerank', key.secret, { query: 'q', documents: ['short', 'word '.repeat(100)] });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'documents' });
    const unequal = await post('/v1/score', key.secret, { text_1: ['a', 'b'], text_2: ['c'] });
    expect(unequal.status).toBe(400);
    expect(t.upstream.calls).toHaveLength(0);
    t.upstream.behave(reply((call) => ({ results: results(call) })));
    await post('/v1/rerank', key.secret, RERANK).expect(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record.estimated).toBe(true);
    expect(record.promptTokens).toBeGreaterThan(8);
  });

  it('a model that serves chat alone refuses rerank, naming what it serves', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await request(t.proxy.url)
      .post('/v1/rerank')
      .set('authorization', `Bearer ${key.secret}`)
      .send({ model: 'acme/chat-small', ...RERANK });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('does not serve /v1/rerank');
  });
});
