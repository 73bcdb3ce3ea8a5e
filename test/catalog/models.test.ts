/** The models file: YAML, validated at start; a bad entry is named with its field; reloads keep a good catalog. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCatalog, loadCatalog, ModelsFile, ModelsFileError } from '../../src/catalog/models';

const defaults = { upstreamUrl: 'http://up:8000/v1', upstreamApiKey: 'default-key', env: { VLLM_CODE_API_KEY: 'code-key' } };
const base = { context_length: 100, max_output_tokens: 10 };

function fileWith(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tm-models-'));
  const f = join(dir, 'models.yaml');
  writeFileSync(f, text);
  return f;
}

describe('models file', () => {
  it.each(['config/models.yaml', 'config/models.example.yaml'])('loads the shipped %s', (file) => {
    const catalog = loadCatalog(file, defaults);
    expect(catalog.list().length).toBeGreaterThan(1);
    for (const m of catalog.list()) expect(m.id).toMatch(/^[^/]+\/.+$/);
  });

  it('routes the example file’s models to two upstreams, each with its own key', () => {
    const catalog = loadCatalog('config/models.example.yaml', defaults);
    const urls = new Set(catalog.list().map((m) => m.upstreamUrl));
    expect(urls.size).toBe(2);
    expect(catalog.get('qwen/qwen2.5-coder-32b-instruct')?.upstreamApiKey).toBe('code-key');
    expect(catalog.get('meta/llama-3.1-8b-instruct')?.upstreamApiKey).toBeUndefined();
    expect(catalog.get('llama-3.1-8b')).toBe(catalog.get('meta/llama-3.1-8b-instruct'));
    expect(catalog.get('qwen/qwen2.5-coder-32b-instruct')?.limits).toEqual({ rpm: 600, tpm: 2_000_000, maxConcurrent: 32 });
  });

  it('gives a file of the core fields alone permissive defaults', () => {
    const c = loadCatalog(fileWith('models:\n  - id: a/b\n    context_length: 100\n    max_output_tokens: 10\n'), defaults);
    expect(c.get('a/b')).toEqual({
      id: 'a/b',
      upstreamModel: 'a/b',
      idJson: Buffer.from('"a/b"'),
      upstreamUrl: 'http://up:8000/v1',
      // A model's own URL is a pool of one: no retries elsewhere, no health checks, no queue.
      pool: expect.objectContaining({
        name: 'a/b',
        servers: [{ url: 'http://up:8000/v1', label: 'http://up:8000', weight: 1, maxConcurrent: undefined }],
        retries: 0,
        healthIntervalMs: 0,
      }),
      fallbacks: [],
      upstreamApiKey: 'default-key',
      contextLength: 100,
      maxOutputTokens: 10,
      outputCapFields: {
        chat: ['max_tokens', 'max_completion_tokens'],
        completions: ['max_tokens'],
        responses: ['max_output_tokens'],
        messages: ['max_tokens'],
      },
      inputWeight: 1,
      cachedInputWeight: 1,
      cacheWriteWeight: 1,
      outputWeight: 1,
      streamIncludeUsage: true,
      drainMs: 30_000,
      endpoints: new Set(['chat', 'completions', 'responses']),
      capabilities: { tools: true, jsonMode: true, vision: true, developerRole: 'native', sampling: null },
      hostedTools: new Map(),
      pricing: undefined,
      limits: undefined,
      created: expect.any(Number),
      ownedBy: 'a',
    });
    expect(c.get('a/c')).toBeUndefined();
  });

  it('charges cached prompt tokens at the input weight unless cached_input says otherwise, and prices them alike', () => {
    const c = buildCatalog(
      {
        models: [
          { id: 'a/plain', quota_weight: { input: 2 }, pricing: { input: 1, output: 2 }, ...base },
          { id: 'a/cached', quota_weight: { input: 2, cached_input: 0.5 }, pricing: { input: 1, cached_input: 0.1, output: 2 }, ...base },
        ],
      },
      defaults,
    );
    expect(c.get('a/plain')).toMatchObject({ inputWeight: 2, cachedInputWeight: 2, pricing: { input: 1, cachedInput: 1 } });
    expect(c.get('a/cached')).toMatchObject({ inputWeight: 2, cachedInputWeight: 0.5, pricing: { input: 1, cachedInput: 0.1 } });
  });

  it('lets a model override its upstream’s stream usage switch', () => {
    const c = buildCatalog(
      {
        upstreams: [{ name: 'u', url: 'http://u/v1', stream_include_usage: false }],
        models: [
          { id: 'a/x', upstream: 'u', ...base },
          { id: 'a/y', upstream: 'u', stream_include_usage: true, ...base },
        ],
      },
      defaults,
    );
    expect(c.get('a/x')?.streamIncludeUsage).toBe(false);
    expect(c.get('a/y')?.streamIncludeUsage).toBe(true);
  });

  it('reads drain_seconds from the model, else its upstream, else UPSTREAM_DRAIN_SECONDS (30 when unset)', () => {
    const file = {
      upstreams: [
        { name: 'u', url: 'http://u/v1', drain_seconds: 0 },
        { name: 'v', url: 'http://v/v1' },
      ],
      models: [
        { id: 'a/x', upstream: 'u', ...base },
        { id: 'a/y', upstream: 'u', drain_seconds: 5, ...base },
        { id: 'a/z', upstream: 'v', ...base },
      ],
    };
    const c = buildCatalog(file, { ...defaults, drainSeconds: 12 });
    expect([c.get('a/x')?.drainMs, c.get('a/y')?.drainMs, c.get('a/z')?.drainMs]).toEqual([0, 5_000, 12_000]);
    expect(buildCatalog(file, defaults).get('a/z')?.drainMs).toBe(30_000);
    expect(() => buildCatalog({ models: [{ id: 'a/x', drain_seconds: -1, ...base }] }, defaults)).toThrow(
      /models\[0\]\.drain_seconds \(a\/x\)/,
    );
  });

  it.each([
    ['models[0].context_length (x/y)', { models: [{ id: 'x/y', max_output_tokens: 5 }] }],
    ['models[0].id', { models: [{ id: 'no-vendor', ...base }] }],
    [
      'models[1].upstream_url (x/z)',
      {
        models: [
          { id: 'x/y', ...base },
          { id: 'x/z', upstream_url: 'nope', ...base },
        ],
      },
    ],
    ['models[0].capabilities.tools (x/y)', { models: [{ id: 'x/y', capabilities: { tools: 'yes' }, ...base }] }],
    [
      'models[0].capabilities.sampling_parameters[0] (x/y)',
      { models: [{ id: 'x/y', capabilities: { sampling_parameters: ['temprature'] }, ...base }] },
    ],
    ['models[0].quota_weight.output (x/y)', { models: [{ id: 'x/y', quota_weight: { output: 0 }, ...base }] }],
    ['models[0].pricing.input (x/y)', { models: [{ id: 'x/y', pricing: { input: -1, output: 1 }, ...base }] }],
    ['models[0].quota_weight.cached_input (x/y)', { models: [{ id: 'x/y', quota_weight: { cached_input: -0.5 }, ...base }] }],
    [
      'model x/y: quota_weight.cached_input exceeds quota_weight.input',
      { models: [{ id: 'x/y', quota_weight: { input: 1, cached_input: 1.5 }, ...base }] },
    ],
    ['models[0].limits.rpm (x/y): must be at least 1', { models: [{ id: 'x/y', limits: { rpm: 0 }, ...base }] }],
    ['models[0].limits.max_concurrent (x/y)', { models: [{ id: 'x/y', limits: { max_concurrent: 1.5 }, ...base }] }],
    ['models[0].limits.rps (x/y): is not a known field', { models: [{ id: 'x/y', limits: { rps: 5 }, ...base }] }],
    ['models[0].contextlength (x/y): is not a known field', { models: [{ id: 'x/y', contextlength: 5, ...base }] }],
    ['models', { models: [] }],
    [
      'listed twice',
      {
        models: [
          { id: 'x/y', ...base },
          { id: 'x/z', aliases: ['x/y'], ...base },
        ],
      },
    ],
    ['exceeds context_length', { models: [{ id: 'x/y', context_length: 10, max_output_tokens: 50 }] }],
    ['upstream nope is not in upstreams', { models: [{ id: 'x/y', upstream: 'nope', ...base }] }],
    [
      'environment variable MISSING_KEY is not set',
      { upstreams: [{ name: 'u', url: 'http://u/v1', api_key_env: 'MISSING_KEY' }], models: [{ id: 'x/y', upstream: 'u', ...base }] },
    ],
  ])('refuses a bad file, naming %s', (where, content) => {
    expect(() => buildCatalog(content, defaults)).toThrow(ModelsFileError);
    expect(() => buildCatalog(content, defaults)).toThrow(where);
  });

  it('resolves hosted_tools (max_calls default 5, the shared ids of each tool) and refuses a function or priceless entry', () => {
    const hosted_tools = {
      web_search: { per_call_tokens: 2000 },
      file_search: { per_call_tokens: 500, max_calls: 2, vector_store_ids: ['vs_1'] },
    };
    const c = buildCatalog({ models: [{ id: 'a/t', hosted_tools, ...base }] }, defaults);
    expect([...c.get('a/t')!.hostedTools]).toEqual([
      ['web_search', { perCallTokens: 2000, maxCalls: 5, sharedIds: new Set(), allowedHosts: undefined, allowPrivateHosts: false }],
      ['file_search', { perCallTokens: 500, maxCalls: 2, sharedIds: new Set(['vs_1']), allowedHosts: undefined, allowPrivateHosts: false }],
    ]);
    const bad = (tools: unknown) => () => buildCatalog({ models: [{ id: 'a/t', hosted_tools: tools, ...base }] }, defaults);
    expect(bad({ function: { per_call_tokens: 1 } })).toThrow(/hosted_tools.*function and custom tools always pass/);
    expect(bad({ web_search: {} })).toThrow(/hosted_tools\.web_search\.per_call_tokens.*is required/);
    expect(bad({ web_search: { per_call_tokens: 0 } })).toThrow(ModelsFileError);
  });

  it('refuses unreadable and non-YAML files in one line', () => {
    expect(() => loadCatalog('/nonexistent/models.yaml', defaults)).toThrow(/cannot read: ENOENT/);
    expect(() => loadCatalog(fileWith('models: [a, b\n'), defaults)).toThrow(/not valid YAML/);
  });

  it('reloads a good file and keeps the old catalog when the new one is bad', async () => {
    const file = fileWith('models:\n  - id: a/one\n    context_length: 100\n    max_output_tokens: 10\n');
    const models = new ModelsFile(file, defaults);
    const first = models.current();
    writeFileSync(
      file,
      'models:\n  - id: a/one\n    context_length: 100\n    max_output_tokens: 10\n  - id: a/two\n    context_length: 100\n    max_output_tokens: 10\n',
    );
    expect(await models.reload()).toBe(2);
    expect(models.current().get('a/two')).toBeDefined();
    expect(first.get('a/two')).toBeUndefined();
    writeFileSync(file, 'models: []\n');
    await expect(models.reload()).rejects.toThrow(ModelsFileError);
    expect(models.current().list()).toHaveLength(2);
  });
});
