/** The model list says which endpoints each model serves; an embedding model shows its input price alone. */
import request from 'supertest';
import { buildCatalog } from '../../src/catalog/models';
import { modelObject } from '../../src/api/model';
import { modelPage } from '../../src/console/model-page';
import { keyWithTokens } from '../helpers/stores';
import { proxyFixture } from '../helpers/fixture';

const catalog = buildCatalog(
  {
    models: [
      { id: 'acme/chat', context_length: 8192, max_output_tokens: 1024, pricing: { input: 0.5, output: 1.5 } },
      { id: 'acme/embed', endpoints: ['embeddings'], context_length: 512, max_output_tokens: 1, pricing: { input: 0.02, output: 9 } },
    ],
  },
  { upstreamUrl: 'http://up/v1', upstreamApiKey: undefined, env: {} },
);

describe('endpoints on the model list', () => {
  it('lists the endpoints of each model, and only the input price of an embedding model', () => {
    const [chat, embed] = catalog.list().map(modelObject);
    expect(chat.endpoints).toEqual(['chat', 'completions', 'responses']);
    expect(chat.pricing).toMatchObject({ input: 0.5, output: 1.5 });
    expect(embed.endpoints).toEqual(['embeddings']);
    expect(embed.pricing).toEqual({ input: 0.02, currency: 'USD', unit: 'per_million_tokens' });
    expect(chat.quota_weight).toEqual({ input: 1, cached_input: 1, output: 1 });
    expect(embed.quota_weight).toEqual({ input: 1, cached_input: 1 });

    const page = modelPage([chat, embed]);
    const rows = page.split('<tr>').slice(2);
    expect(rows[0]).toContain('<code>/v1/responses</code>');
    expect(rows[1]).toContain('<code>/v1/embeddings</code>');
    expect(rows[1]).not.toContain('/v1/chat/completions');
    expect(rows[1]).not.toContain('Output');
  });

  it('refuses a models file that prices a text model without an output price', () => {
    expect(() =>
      buildCatalog(
        { models: [{ id: 'a/b', context_length: 10, max_output_tokens: 5, pricing: { input: 1 } }] },
        { upstreamUrl: 'http://up/v1', upstreamApiKey: undefined, env: {} },
      ),
    ).toThrow('model a/b: pricing.output is required');
  });
});

describe('GET /v1/models', () => {
  const t = proxyFixture('memory', { models: [{}, { endpoints: ['embeddings'] }] });

  it("names each model's endpoints", async () => {
    const key = await keyWithTokens(t.s.store, 10);
    const res = await request(t.proxy.url).get('/v1/models').set('authorization', `Bearer ${key.secret}`);
    expect(res.body.data.map((m: { endpoints: string[] }) => m.endpoints)).toEqual([['chat', 'completions', 'responses'], ['embeddings']]);
  });
});
