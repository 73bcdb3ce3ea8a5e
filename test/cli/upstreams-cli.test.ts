/** `tokenmeter upstreams` end to end: the built CLI against the built proxy process, on a real redis-server. */
import { cliFixture } from '../helpers/cli-fixture';
import { MODEL } from '../helpers/proxy';

const ADMIN = 'cli-upstreams-admin-token-0123';

describe('tokenmeter CLI: upstreams', () => {
  const f = cliFixture(ADMIN, 'cliu');

  it("lists each pool's servers with their health, in-flight count and last error", async () => {
    const shown = await f.cli('upstreams');
    expect(shown.code).toBe(0);
    const [header, row] = shown.stdout.trim().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['POOL', 'MODELS', 'SERVER', 'WEIGHT', 'IN FLIGHT', 'MAX', 'STATE', 'LAST ERROR']);
    expect(row.split(/\s{2,}/)).toEqual([MODEL, MODEL, new URL(f.upstream.url).origin, '1', '0', '-', 'healthy', '-']);
    const json = JSON.parse((await f.cli('upstreams', '--json')).stdout);
    expect(json).toEqual([
      {
        object: 'upstream_pool',
        name: MODEL,
        retries: 0,
        affinity: null,
        models: [MODEL],
        fallbacks: { unhealthy: 0, failed: 0, overloaded: 0 },
        servers: [
          {
            url: new URL(f.upstream.url).origin,
            weight: 1,
            max_concurrent: null,
            in_flight: 0,
            healthy: true,
            ejected_until: null,
            last_error: null,
          },
        ],
      },
    ]);
  });
});
