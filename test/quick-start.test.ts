/**
 * README's quick start, step by step, as a newcomer runs it: the mock upstream (`npm run mock-upstream`'s script),
 * the built proxy on the embedded store with ADMIN_TOKEN, the CLI to create a key, the curl request, the balance after,
 * and opening the console with an operator account.
 * Only the ports differ (free ones instead of 8000 and 8080).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { eventually } from './helpers/eventually';
import { startProxyProcess, runCli, type ProxyProcess } from './helpers/processes';

const ROOT = join(__dirname, '..');
const ADMIN = 'quickstart-admin-token';

describe('README quick start', () => {
  let upstream: ReturnType<typeof spawn>;
  let proxy: ProxyProcess;

  afterAll(async () => {
    await proxy?.stop();
    upstream?.kill('SIGKILL');
  });

  it('goes from nothing to a metered request and a lower balance', async () => {
    // `npm run mock-upstream` runs this script with MOCK_MAX_WORDS=12 (its PORT defaults to 8000; here a free one).
    upstream = spawn(process.execPath, ['--import', 'tsx', 'bench/mock-upstream.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', MOCK_MAX_WORDS: '12', PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const upstreamPort = await new Promise<number>((resolve, reject) => {
      upstream.stdout!.once('data', (c: Buffer) => resolve(JSON.parse(c.toString()).port));
      upstream.once('exit', (code) => reject(new Error(`mock upstream exited with ${code}`)));
    });

    // `ADMIN_TOKEN=… npm start`: the default models file, the embedded store (no REDIS_URL).
    proxy = await startProxyProcess({ ADMIN_TOKEN: ADMIN, UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/v1` });
    expect(proxy.output()).toContain('"store":"memory"');
    const env = { TOKENMETER_ADMIN_TOKEN: ADMIN, TOKENMETER_URL: proxy.url };

    const created = await runCli(['keys', 'create', '--name', 'demo', '--tokens', '10000'], env);
    expect(created.stdout).toContain('with a balance of 10,000 tokens.');
    const key = /sk-[\w-]{43}/.exec(created.stdout)![0];
    const keyId = /key_\w+/.exec(created.stdout)![0];

    const res = await request(proxy.url)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'application/json')
      .send('{"model": "meta/llama-3.1-8b-instruct", "messages": [{"role": "user", "content": "Hello"}]}');
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('meta/llama-3.1-8b-instruct');
    expect(res.body.choices[0].message.content.trim().split(' ')).toHaveLength(12);

    await eventually(async () => {
      const state = JSON.parse((await runCli(['keys', 'show', keyId, '--json'], env)).stdout);
      expect(state.usage.requests).toBe(1);
      expect(state.balance).toBe(10_000 - res.body.usage.total_tokens);
    });

    // The console: / leads there, the model page needs no account, and the operator account the CLI makes signs in.
    const root = await request(proxy.url).get('/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/console/');
    expect((await request(proxy.url).get('/console/')).text).toContain('/console/assets/console.js');
    expect((await request(proxy.url).get('/console/models')).text).toContain('meta/llama-3.1-8b-instruct');
    const operator = await runCli(
      ['accounts', 'create', '--email', 'you@example.org', '--role', 'admin', '--password-stdin', '--tokens', '10000'],
      env,
      'a long passphrase\n',
    );
    expect(operator).toMatchObject({ code: 0 });
    const login = await request(proxy.url).post('/console/api/login').send({ email: 'you@example.org', password: 'a long passphrase' });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ email: 'you@example.org', role: 'admin' });
  });
});
