/** The built server as users start it: one-line start-up errors, SIGHUP reloads of the models file. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { stringify } from 'yaml';
import { startProxyProcess } from './helpers/processes';
import { writeModelsFile } from './helpers/models-file';
import { startUpstream } from './helpers/upstream';
import { eventually } from './helpers/eventually';
import { UPSTREAM_MODEL } from './helpers/proxy';

const ROOT = join(__dirname, '..');

function startAndFail(env: Record<string, string>): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['dist/server.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
    encoding: 'utf8',
    // Generous: on timeout spawnSync sends SIGTERM, which the server takes as a stop and answers with exit 0.
    timeout: 30_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, stderr: r.stderr };
}

describe('the server process', () => {
  it.each([
    ['PORT', { PORT: 'http' }],
    ['UPSTREAM_URL', { UPSTREAM_URL: 'not a url' }],
    ['REDIS_URL', { REDIS_URL: 'localhost' }],
    ['WORKERS', { WORKERS: '1.5' }],
  ])('stops at start with one line naming %s', (name, env) => {
    const r = startAndFail(env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^tokenmeter: invalid configuration: ${name}: [^\\n]+\\n$`));
  });

  it('refuses more than one worker on the embedded store, in one line, before forking any', () => {
    const r = startAndFail({ WORKERS: '2' });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'tokenmeter: invalid configuration: WORKERS: 2 workers need the Redis store (REDIS_URL): the embedded store lives inside one process\n',
    );
  });

  it('stops a worker group whose workers cannot start, with the error once per worker and exit 1', () => {
    // Forks two workers: slow on a loaded machine (it once took over 10 s).
    const file = writeModelsFile([{ id: 'a/b', context_length: 100 }]);
    const r = startAndFail({ WORKERS: '2', REDIS_URL: 'redis://127.0.0.1:1', MODELS_FILE: file });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`tokenmeter: ${file}: models[0].max_output_tokens (a/b): is required`);
  }, 40_000);

  it('stops at start with one line naming the bad models-file entry and field', () => {
    const file = writeModelsFile([{ id: 'a/b', context_length: 100 }]);
    const r = startAndFail({ MODELS_FILE: file });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `tokenmeter: ${file}: models[0].max_output_tokens (a/b): is required (only a model that serves embeddings alone has no output)\n`,
    );
  });

  it('reloads the models file on SIGHUP, and keeps the old catalog when the new file is bad', async () => {
    const upstream = await startUpstream();
    const file = writeModelsFile([{ id: 'acme/one', upstream_model: UPSTREAM_MODEL, context_length: 1000, max_output_tokens: 10 }]);
    const proxy = await startProxyProcess({ UPSTREAM_URL: upstream.url, MODELS_FILE: file, ADMIN_TOKEN: 'sighup-admin-token-123' });
    try {
      const key = await request(proxy.url).post('/admin/keys').set('authorization', 'Bearer sighup-admin-token-123').send({ tokens: 1000 });
      const models = () => request(proxy.url).get('/v1/models').set('authorization', `Bearer ${key.body.key}`);
      expect((await models()).body.data.map((m: { id: string }) => m.id)).toEqual(['acme/one']);

      writeFileSync(file, stringify({ models: [{ id: 'acme/two', context_length: 1000, max_output_tokens: 10 }] }));
      proxy.child.kill('SIGHUP');
      await eventually(async () => expect((await models()).body.data.map((m: { id: string }) => m.id)).toEqual(['acme/two']));

      writeFileSync(file, 'models: nope\n');
      proxy.child.kill('SIGHUP');
      await eventually(async () => expect(proxy.output()).toContain('models file refused; the old catalog stays'));
      expect((await models()).body.data.map((m: { id: string }) => m.id)).toEqual(['acme/two']);
    } finally {
      await proxy.stop();
      await upstream.close();
    }
  });
});
