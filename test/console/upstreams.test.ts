/**
 * The operator's upstreams page in headless Chromium against the built proxy on Redis: a pool of two real test
 * upstreams, one of them stopped; the page shows both servers, the stopped one unhealthy with its last error once the
 * operator clicks Refresh, and a pool name that is markup as text; axe finds nothing serious.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { stringify } from 'yaml';
import { expectNothingAmiss, launchBrowser, type WatchedPage } from '../helpers/browser';
import { ATTACK, adminCall, operatorPage, review, settledPage, signIn } from '../helpers/console-browser';
import { eventually } from '../helpers/eventually';
import { MODEL, UPSTREAM_MODEL } from '../helpers/proxy';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'console-upstreams-admin-token';
const OPERATOR = { email: 'pools@example.org', password: 'operator passphrase' };
const POOL = `replicas ${ATTACK}`;

function poolModelsFile(urls: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tm-models-')), 'models.yaml');
  const upstreams = [{ name: POOL, servers: urls.map((url) => ({ url, max_concurrent: 8 })), health_interval: 0.1 }];
  const models = [{ id: MODEL, upstream_model: UPSTREAM_MODEL, upstream: POOL, context_length: 8192, max_output_tokens: 1024 }];
  writeFileSync(file, stringify({ upstreams, models }));
  return file;
}

describe('the upstreams page in Chromium', () => {
  let well: TestUpstream;
  let stopped: TestUpstream;
  let rp: RedisProxy;
  let browser: Browser;
  let url: string;
  let w: WatchedPage;

  beforeAll(async () => {
    well = await startUpstream();
    stopped = await startUpstream();
    rp = await startRedisProxyProcess({ UPSTREAM_URL: well.url, MODELS_FILE: poolModelsFile([well.url, stopped.url]), ADMIN_TOKEN });
    url = rp.proxy.url;
    browser = await launchBrowser();
    w = await operatorPage(browser, url, ADMIN_TOKEN, OPERATOR);
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await well?.close();
  });
  afterEach(() => {
    expectNothingAmiss(w);
  });

  const serverState = async (server: string) => {
    const list = await adminCall(url, ADMIN_TOKEN, 'GET', '/admin/upstreams');
    return list.data[0].servers.find((s: { url: string }) => s.url === server);
  };

  test('an operator sees both servers of a pool, and after Refresh the stopped one unhealthy with its last error', async () => {
    const { page } = w;
    await eventually(async () => expect(await serverState(new URL(well.url).origin)).toMatchObject({ healthy: true }));
    await signIn(page, url, OPERATOR);
    await page.getByRole('navigation').getByRole('link', { name: 'Upstreams', exact: true }).click();
    await settledPage(page, 'Upstreams');
    // The pool's name is markup: shown as the heading's text, never an element.
    await page.getByRole('heading', { level: 2, name: POOL, exact: true }).waitFor();
    await expect(page.locator('main img').count()).resolves.toBe(0);
    const rows = page.locator('table.list tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    const stoppedRow = rows.filter({ hasText: new URL(stopped.url).origin });
    await expect(stoppedRow.getByText('healthy', { exact: true }).count()).resolves.toBe(1);
    await expect(page.getByText(MODEL).count()).resolves.toBe(1);
    await expect(
      rows
        .filter({ hasText: new URL(well.url).origin })
        .getByText('0 / 8', { exact: true })
        .count(),
    ).resolves.toBe(1);

    await stopped.close();
    await eventually(async () => expect(await serverState(new URL(stopped.url).origin)).toMatchObject({ healthy: false }));
    const { last_error: lastError } = await serverState(new URL(stopped.url).origin);
    expect(lastError.message).toMatch(/^health check \/v1\/models: /);
    // Read once: the page shows what it read until the operator asks again.
    await expect(stoppedRow.getByText('unhealthy', { exact: true }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await stoppedRow.getByText('unhealthy', { exact: true }).waitFor();
    await expect(stoppedRow.getByText(/^health check \/v1\/models: /).count()).resolves.toBe(1);
    await expect(
      rows
        .filter({ hasText: new URL(well.url).origin })
        .getByText('healthy', { exact: true })
        .count(),
    ).resolves.toBe(1);
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await review(w, 'admin-upstreams');
  });

  test('without a session the console upstreams route answers 401, not the pools', async () => {
    const res = await fetch(`${url}/console/api/admin/upstreams`);
    expect(res.status).toBe(401);
  });
});
