/** The models file's pools and fallbacks: resolved with their defaults, and refused in one line when they cannot work. */
import { buildCatalog } from '../../src/catalog/models';

const defaults = { upstreamUrl: 'http://up:8000/v1', upstreamApiKey: undefined, env: {} };
const model = { context_length: 100, max_output_tokens: 10 };

describe('pools in the models file', () => {
  it('resolves a pool of servers with its defaults, and a single url as a pool of one', () => {
    const c = buildCatalog(
      {
        upstreams: [
          { name: 'vllm', servers: [{ url: 'http://gpu1:8000/v1/' }, { url: 'http://gpu2:8000/v1', weight: 2, max_concurrent: 64 }] },
          { name: 'hosted', url: 'https://api.example.com/v1' },
        ],
        models: [
          { id: 'a/pooled', upstream: 'vllm', fallbacks: ['a/hosted'], ...model },
          { id: 'a/hosted', upstream: 'hosted', ...model },
        ],
      },
      defaults,
    );
    expect(c.get('a/pooled')).toMatchObject({
      upstreamUrl: 'http://gpu1:8000/v1',
      fallbacks: ['a/hosted'],
      pool: {
        name: 'vllm',
        servers: [
          { url: 'http://gpu1:8000/v1', weight: 1, maxConcurrent: undefined },
          { url: 'http://gpu2:8000/v1', weight: 2, maxConcurrent: 64 },
        ],
        retries: 2,
        queueTimeoutMs: 1000,
        affinity: undefined,
        healthIntervalMs: 10_000,
        healthPaths: ['/health', '/v1/models'],
        outlier: { consecutiveFailures: 5, windowMs: 30_000, baseEjectionMs: 30_000, maxEjectionMs: 300_000, maxEjectionPercent: 50 },
      },
    });
    // A pool of one has nowhere else to send its requests: no health checks.
    expect(c.get('a/hosted')?.pool).toMatchObject({
      name: 'hosted',
      servers: [{ url: 'https://api.example.com/v1' }],
      healthIntervalMs: 0,
    });
  });

  it.each([
    [{ name: 'u', url: 'http://a/v1', servers: [{ url: 'http://b/v1' }] }, [], 'upstream u: give url or servers, not both or neither'],
    [{ name: 'u' }, [], 'upstream u: give url or servers, not both or neither'],
    [
      { name: 'u', servers: [{ url: 'http://a/v1' }, { url: 'http://a/v1/' }] },
      [],
      'upstream u: servers[0] and servers[1] are the same server (http://a:80)',
    ],
    [
      { name: 'u', servers: [{ url: 'http://h:80/v1' }, { url: 'HTTP://H/v1' }] },
      [],
      'upstream u: servers[0] and servers[1] are the same server (http://h:80)',
    ],
    [{ name: 'u', servers: [{ url: 'http://a/v1', weight: 1e-320 }] }, [], 'upstreams[0].servers[0].weight: must be between 0.01 and 100'],
    [{ name: 'u', servers: [{ url: 'http://a/v1', weight: 101 }] }, [], 'upstreams[0].servers[0].weight: must be between 0.01 and 100'],
    [{ name: 'u', url: 'http://user:secret@a/v1' }, [], 'upstream u: url carries credentials (user:password@): they are never sent'],
    [{ name: 'u', servers: [{ url: 'http://a/v1' }, { url: 'http://x:@b/v1' }] }, [], 'upstream u: servers[1].url carries credentials'],
    [{ name: 'u', servers: [] }, [], 'upstreams[0].servers: must list at least one server'],
    [{ name: 'u', url: 'http://a/v1', affinity: 'session' }, [], 'upstreams[0].affinity'],
    [{ name: 'u', url: 'http://a/v1' }, ['a/none'], 'model a/m: fallback a/none is not a served model'],
    [{ name: 'u', url: 'http://a/v1' }, ['a/m'], 'model a/m: names itself as a fallback'],
  ])('refuses %j with fallbacks %j', (upstream, fallbacks, message) => {
    expect(() => buildCatalog({ upstreams: [upstream], models: [{ id: 'a/m', upstream: 'u', fallbacks, ...model }] }, defaults)).toThrow(
      message,
    );
  });

  it('refuses an upstream named like a model, naming both', () => {
    const models = [{ id: 'a/m', aliases: ['fast'], upstream: 'fast', ...model }];
    expect(() => buildCatalog({ upstreams: [{ name: 'fast', url: 'http://a/v1' }], models }, defaults)).toThrow(
      'models file: upstream fast has the name of model a/m (its alias fast): rename one',
    );
  });

  it('refuses a cycle of fallbacks, naming it', () => {
    const models = [
      { id: 'a/one', fallbacks: ['a/two'], ...model },
      { id: 'a/two', fallbacks: ['a/three'], ...model },
      { id: 'a/three', fallbacks: ['a/one'], ...model },
    ];
    expect(() => buildCatalog({ models }, defaults)).toThrow(
      'models file: model a/one: its fallbacks form a cycle: a/one → a/two → a/three → a/one',
    );
  });

  it('refuses an UPSTREAM_URL or upstream_url with credentials, and keeps a query for every call', () => {
    expect(() => buildCatalog({ models: [{ id: 'a/m', ...model }] }, { ...defaults, upstreamUrl: 'http://u:p@up/v1' })).toThrow(
      'models file: UPSTREAM_URL carries credentials',
    );
    const c = buildCatalog(
      { models: [{ id: 'a/m', upstream_url: 'https://Az.Example.com:443/openai/v1/?api-version=2025-01-01', ...model }] },
      defaults,
    );
    expect(c.get('a/m')?.pool).toMatchObject({
      name: 'a/m',
      servers: [{ url: 'https://az.example.com/openai/v1?api-version=2025-01-01', label: 'https://az.example.com:443' }],
    });
  });

  it('keeps upstream names apart from models’ own URLs: an upstream named like a URL gets a pool of its own', () => {
    const c = buildCatalog(
      {
        upstreams: [{ name: 'http://dear/v1', url: 'http://cheap/v1' }],
        models: [
          { id: 'a/dear', upstream_url: 'http://dear/v1', ...model },
          { id: 'a/cheap', upstream: 'http://dear/v1', ...model },
        ],
      },
      defaults,
    );
    expect(c.get('a/dear')?.pool.key).not.toBe(c.get('a/cheap')?.pool.key);
    expect(c.get('a/cheap')?.pool.servers[0].url).toBe('http://cheap/v1');
  });
});
