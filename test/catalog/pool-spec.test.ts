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
    [{ name: 'u', servers: [{ url: 'http://a/v1' }, { url: 'http://a/v1/' }] }, [], 'upstream u: a server is listed twice'],
    [{ name: 'u', servers: [] }, [], 'upstreams[0].servers: must list at least one server'],
    [{ name: 'u', url: 'http://a/v1', affinity: 'session' }, [], 'upstreams[0].affinity'],
    [{ name: 'u', url: 'http://a/v1' }, ['a/none'], 'model a/m: fallback a/none is not a served model'],
    [{ name: 'u', url: 'http://a/v1' }, ['a/m'], 'model a/m: names itself as a fallback'],
  ])('refuses %j with fallbacks %j', (upstream, fallbacks, message) => {
    expect(() => buildCatalog({ upstreams: [upstream], models: [{ id: 'a/m', upstream: 'u', fallbacks, ...model }] }, defaults)).toThrow(
      message,
    );
  });
});
