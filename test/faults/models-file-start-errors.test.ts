/**
 * The built proxy refuses, at start, a models file that cannot work, in one clear line naming the fault: a pool
 * misconfigured into a leak (credentials published on /metrics, a cheap model answered by a dear model's server, a
 * healthy server made unreachable by its weight) never gets to serve a request.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startProxyProcess } from '../helpers/processes';

const model = { context_length: 8192, max_output_tokens: 1024 };

function modelsFile(content: Record<string, unknown>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tm-models-')), 'models.yaml');
  writeFileSync(file, stringify(content));
  return file;
}

/** Starts `node dist/server.js` on the file and returns what it printed once it exited (it must not start). */
async function refusal(content: Record<string, unknown>): Promise<string> {
  const started = await startProxyProcess({ MODELS_FILE: modelsFile(content), REDIS_URL: process.env.TEST_REDIS_URL! }).then(
    async (p) => {
      await p.stop();
      return undefined;
    },
    (err: Error) => err.message,
  );
  if (started === undefined) throw new Error('the proxy started on a models file it should refuse');
  return started;
}

describe('a models file that cannot work is a start error of the built proxy', () => {
  it.each([
    [
      'an upstream named like a model (the two namespaces collide)',
      {
        upstreams: [{ name: 'acme/cheap', url: 'http://127.0.0.1:9/v1' }],
        models: [
          { id: 'acme/cheap', upstream_url: 'http://127.0.0.1:9/v1', ...model },
          { id: 'acme/dear', upstream: 'acme/cheap', ...model },
        ],
      },
      /acme\/cheap/,
    ],
    [
      'a weight that makes a healthy server unreachable',
      {
        upstreams: [{ name: 'gpu', servers: [{ url: 'http://127.0.0.1:9/v1', weight: 1e-320 }] }],
        models: [{ id: 'a/m', upstream: 'gpu', ...model }],
      },
      /weight: must be between 0\.01 and 100/,
    ],
    [
      'two servers that are one after normalisation',
      {
        upstreams: [{ name: 'gpu', servers: [{ url: 'http://127.0.0.1:80/v1' }, { url: 'http://127.0.0.1/v1' }] }],
        models: [{ id: 'a/m', upstream: 'gpu', ...model }],
      },
      /are the same server/,
    ],
    [
      'credentials in a server URL (they would be published, never sent)',
      { upstreams: [{ name: 'gpu', url: 'http://user:secret@127.0.0.1:9/v1' }], models: [{ id: 'a/m', upstream: 'gpu', ...model }] },
      /credentials/,
    ],
  ])('%s', async (_what, content, names) => {
    const out = await refusal(content);
    expect(out).toMatch(/proxy exited with 1/);
    expect(out).toMatch(names);
    // One clear line, not a stack trace; and the secret of a refused URL is not printed.
    expect(out).not.toMatch(/^\s+at /m);
    expect(out).not.toContain('secret');
  });
});
