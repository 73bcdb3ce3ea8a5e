/**
 * README's quick start, step by step, as a newcomer runs it, with its commands read from README itself: the mock
 * upstream (`npm run mock-upstream`'s script), the built proxy started once as README starts it, the CLI's key, the curl
 * request, the balance after, and the console in Chromium: signing up, and the operator the CLI makes signing in.
 * Only the ports differ (free ones instead of 8000 and 8080).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, openPage } from './helpers/browser';
import { settledPage, signIn } from './helpers/console-browser';
import { eventually } from './helpers/eventually';
import { startProxyProcess, runCli, type ProxyProcess } from './helpers/processes';
import { claimPort } from './helpers/ports';
import { startStandIn } from './helpers/stand-in';

jest.setTimeout(90_000);

const ROOT = join(__dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const QUICK_START = README.slice(README.indexOf('## Quick start\n'), README.indexOf('\n## ', README.indexOf('## Quick start\n')));

/** The quick start's line matching `pattern`; a README that lost it fails here, naming what is gone. */
function readmeLine(pattern: RegExp): RegExpExecArray {
  const m = pattern.exec(QUICK_START);
  if (!m) throw new Error(`README's quick start has no line matching ${pattern}`);
  return m;
}

/** `A=1 B=2` → `{ A: '1', B: '2' }`. */
const assignments = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .trim()
      .split(/\s+/)
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );

describe('README quick start', () => {
  const children: ChildProcess[] = [];
  let proxy: ProxyProcess | undefined;
  let browser: Browser | undefined;

  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
    for (const child of children) child.kill('SIGKILL');
  });

  it('the mock upstream listens on MOCK_PORT, not on PORT, which a shell may have set for the proxy', async () => {
    const mockPort = await claimPort();
    const proxyPort = await claimPort();
    const mock = startStandIn({ MOCK_PORT: String(mockPort), PORT: String(proxyPort) });
    children.push(mock.child);
    await expect(mock.port).resolves.toBe(mockPort);
    // README tells how to move it, with the variable the mock reads.
    expect(readmeLine(/^npm run mock-upstream .*\bMOCK_PORT=(\d+) npm run mock-upstream\b/m)).toBeTruthy();
  });

  it('goes from nothing to a metered request, a lower balance and a console signed into, on one start of the proxy', async () => {
    const mock = startStandIn({ MOCK_PORT: '0' });
    children.push(mock.child);
    const upstreamPort = await mock.port;

    // README's one `… npm start`: the default models file, the embedded store (no REDIS_URL), and its variables.
    const startEnv = assignments(readmeLine(/^((?:[A-Z_]+=\S+ )+)npm start$/m)[1]);
    proxy = await startProxyProcess({ ...startEnv, UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/v1` });
    expect(proxy.output()).toContain('"store":"memory"');
    const url = proxy.url;

    const adminToken = readmeLine(/^export TOKENMETER_ADMIN_TOKEN=(\S+)$/m)[1];
    expect(adminToken).toBe(startEnv.ADMIN_TOKEN);
    const env = { TOKENMETER_ADMIN_TOKEN: adminToken, TOKENMETER_URL: url };

    const created = await runCli(readmeLine(/^npx tokenmeter (keys create .+)$/m)[1].split(' '), env);
    expect(created.stdout).toContain('with a balance of 10,000 tokens.');
    const key = /sk-[\w-]{43}/.exec(created.stdout)![0];
    const keyId = /key_\w+/.exec(created.stdout)![0];

    const res = await request(url)
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

    // The console: / leads there, the model page needs no account.
    const root = await request(url).get('/');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/console/');
    expect((await request(url).get('/console/')).text).toContain('/console/assets/console.js');
    expect((await request(url).get('/console/models')).text).toContain('meta/llama-3.1-8b-instruct');

    // Signing up works on the proxy as started above: no restart (which would forget the key) to open registration.
    browser = await launchBrowser();
    const newcomer = await openPage(browser, url);
    await newcomer.page.goto(`${url}/console/signup`);
    await settledPage(newcomer.page, 'Create an account');
    await newcomer.page.getByLabel('Email').fill('new@example.org');
    await newcomer.page.getByLabel('Password').fill('another long passphrase');
    await newcomer.page.getByRole('button', { name: 'Create account' }).click();
    const overview = newcomer.page.getByRole('heading', { level: 1, name: 'Overview' });
    await overview.or(newcomer.page.getByRole('alert')).first().waitFor();
    expect(await newcomer.page.getByRole('alert').allInnerTexts()).toEqual([]);
    await settledPage(newcomer.page, 'Overview');
    await newcomer.context.close();

    // The operator README's command makes signs in at /console/signin, and the key made earlier is still there.
    const [, password, operatorArgs] = readmeLine(/^echo '([^']+)' \| npx tokenmeter (accounts create .+)$/m);
    expect(await runCli(operatorArgs.split(' '), env, `${password}\n`)).toMatchObject({ code: 0 });
    const email = /--email (\S+)/.exec(operatorArgs)![1];
    const login = await request(url).post('/console/api/login').send({ email, password });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ email, role: 'admin' });
    const operator = await openPage(browser, url);
    await signIn(operator.page, url, { email, password });
    await operator.context.close();
    const state = JSON.parse((await runCli(['keys', 'show', keyId, '--json'], env)).stdout);
    expect(state.usage.requests).toBe(1);
  });
});
