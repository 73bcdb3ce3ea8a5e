/**
 * /rerank, /v2/rerank and /score at the root, as vLLM serves them: the same metered routes as /v1/rerank and /v1/score,
 * each charged the usage its upstream reports.
 */
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { settled } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import type { Behaviour } from '../helpers/upstream';

const MODEL = 'acme/reranker';

const reply =
  (body: Record<string, unknown>): Behaviour =>
  (_call, _req, res) => {
    const text = JSON.stringify({ model: 'Vendor/Reranker-v2', ...body });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

const RERANKED = reply({ id: 'rerank-1', results: [{ index: 0, relevance_score: 0.9 }], usage: { total_tokens: 21 } });
const SCORED = reply({
  id: 'score-1',
  object: 'list',
  data: [{ index: 0, object: 'score', score: 0.5 }],
  usage: { prompt_tokens: 12, total_tokens: 12 },
});

describe('rerank and score at the root paths', () => {
  const t = proxyFixture('memory', {
    models: [
      {},
      {
        id: MODEL,
        upstream_model: 'Vendor/Reranker-v2',
        endpoints: ['rerank', 'score'],
        max_output_tokens: undefined,
        quota_weight: { input: 2 },
      },
    ],
  });

  it.each([
    ['/rerank', RERANKED, { query: 'capital of France', documents: ['Paris is the capital.'] }, '/v1/rerank', 'rerank', 21],
    ['/v2/rerank', RERANKED, { query: 'capital of France', documents: ['Paris is the capital.'] }, '/v1/rerank', 'rerank', 21],
    ['/score', SCORED, { text_1: 'capital of France', text_2: 'Paris is the capital.' }, '/v1/score', 'score', 12],
  ])(
    '%s is metered as its /v1 route: charged its usage, under the client model name',
    async (path, behaviour, body, upstreamPath, endpoint, tokens) => {
      t.upstream.behave(behaviour);
      const key = await keyWithTokens(t.s.store, 10_000);
      const res = await request(t.proxy.url)
        .post(path)
        .set('authorization', `Bearer ${key.secret}`)
        .send({ model: MODEL, ...body })
        .expect(200);
      expect(res.body.model).toBe(MODEL);
      expect(t.upstream.calls[0]).toMatchObject({ path: upstreamPath, body: { model: 'Vendor/Reranker-v2' } });
      await settled(t.proxy);
      const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
      expect(record).toMatchObject({ endpoint, promptTokens: tokens, chargedTokens: tokens * 2, estimated: false });
    },
  );
});
