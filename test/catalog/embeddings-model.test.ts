/**
 * A model without output (it serves embeddings alone): the models file needs no max_output_tokens for it, and
 * /v1/models and the model page show what it is (input price, dimensions) without output or capability rows.
 */
import request from 'supertest';
import { buildCatalog, loadCatalog, ModelsFileError } from '../../src/catalog/models';
import { startProxy, type ProxyUnderTest } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import { MemoryStore } from '../../src/store/memory/memory-store';

const defaults = { upstreamUrl: 'http://up:8000/v1', upstreamApiKey: undefined, env: { VLLM_CODE_API_KEY: 'code-key' } };
const EMBED = { id: 'acme/embed', endpoints: ['embeddings'], context_length: 8192, dimensions: 768, pricing: { input: 0.02 } };

describe('an embeddings model in the models file', () => {
  it('needs no max_output_tokens, where a model with output still does', () => {
    expect(buildCatalog({ models: [EMBED] }, defaults).get('acme/embed')).toMatchObject({ maxOutputTokens: 0, dimensions: 768 });
    expect(() => buildCatalog({ models: [{ id: 'a/chat', context_length: 100 }] }, defaults)).toThrow(
      'models[0].max_output_tokens (a/chat): is required',
    );
    expect(() => buildCatalog({ models: [{ ...EMBED, endpoints: ['embeddings', 'chat'] }] }, defaults)).toThrow(ModelsFileError);
  });

  it('refuses dimensions on a model that serves no embeddings', () => {
    expect(() => buildCatalog({ models: [{ id: 'a/chat', context_length: 100, max_output_tokens: 10, dimensions: 8 }] }, defaults)).toThrow(
      'models[0].dimensions (a/chat): applies only to a model that serves embeddings',
    );
  });

  it.each(['config/models.yaml', 'config/models.example.yaml'])('is shipped in %s', (file) => {
    const embedders = loadCatalog(file, defaults)
      .list()
      .filter((m) => m.endpoints.has('embeddings'));
    expect(embedders.map((m) => [m.id, m.dimensions])).toEqual([['nomic-ai/nomic-embed-text-v1.5', 768]]);
  });
});

describe('an embeddings model as clients see it', () => {
  let proxy: ProxyUnderTest;
  let secret: string;
  beforeAll(async () => {
    const store = new MemoryStore();
    const models = [{}, { ...EMBED, max_output_tokens: undefined } as never];
    proxy = await startProxy({ store, upstreamUrl: 'http://127.0.0.1:9/v1', models });
    secret = (await keyWithTokens(store, 10)).secret;
  });
  afterAll(() => proxy.close());

  it('is listed on /v1/models with its input price and dimensions, and no output or capabilities', async () => {
    const res = await request(proxy.url).get('/v1/models/acme/embed').set('authorization', `Bearer ${secret}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'acme/embed', context_length: 8192, dimensions: 768, endpoints: ['embeddings'] });
    expect(res.body.pricing).toEqual({ input: 0.02, currency: 'USD', unit: 'per_million_tokens' });
    expect(res.body.quota_weight).toEqual({ input: 1, cached_input: 1 });
    expect(res.body).not.toHaveProperty('max_output_tokens');
    expect(res.body).not.toHaveProperty('capabilities');
    // A chat model beside it keeps all of them.
    const chat = await request(proxy.url).get('/v1/models/acme/chat-small').set('authorization', `Bearer ${secret}`);
    expect(chat.body).toMatchObject({ max_output_tokens: 1024, capabilities: { tools: true } });
    expect(chat.body).not.toHaveProperty('dimensions');
  });

  it('shows on the model page as an embeddings model: dimensions, no output, no chat capabilities', async () => {
    const page = (await request(proxy.url).get('/console/models')).text;
    // A model's row in the table: its id may break after its slash (<wbr>), and only there.
    const rowOf = (id: string) => {
      const at = page.indexOf(`<code>${id.replace('/', '/<wbr />')}</code>`);
      expect(at).toBeGreaterThan(-1);
      return page.slice(page.lastIndexOf('<tr>', at), page.indexOf('</tr>', at));
    };
    const embedRow = rowOf('acme/embed');
    expect(embedRow).toContain('no output');
    expect(embedRow).toMatch(/<dt>Dimensions<\/dt>\s*<dd>768<\/dd>/);
    expect(embedRow).toMatch(/<dt>Input<\/dt>\s*<dd>0.02 USD<\/dd>/);
    for (const absent of ['Tools', 'JSON mode', 'Vision', 'Output', ' 1 tokens']) expect(embedRow).not.toContain(absent);
    expect(rowOf('acme/chat-small')).toContain('Tools');
  });
});
