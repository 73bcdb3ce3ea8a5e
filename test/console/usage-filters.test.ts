/**
 * The operator's All usage filters in headless Chromium against the built proxy on Redis: the account and key fields
 * search (an email, a name, a key's prefix), suggest as the operator types, and on Apply filter by the one match, or
 * say in the form that nothing or several match and leave the rows as they were.
 */
import type { Browser, Page } from 'playwright-core';
import { expectNothingAmiss, launchBrowser, type WatchedPage } from '../helpers/browser';
import { ATTACK, adminCall, chat, operatorPage, review, settledPage, signIn } from '../helpers/console-browser';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'console-usage-filters-admin-token';
const OPERATOR = { email: 'ops@example.org', password: 'operator passphrase' };
const NORTH = 'alice@north.example';
const SOUTH = 'bob@south.example';

/** Each row's account and key cells, in order. */
async function shownRows(page: Page): Promise<{ account: string; key: string }[]> {
  const rows = page.locator('table.list tbody tr');
  const accounts = await rows.locator('td[data-label="Account"]').allInnerTexts();
  const keys = await rows.locator('td[data-label="Key"]').allInnerTexts();
  return accounts.map((account, i) => ({ account, key: keys[i] }));
}

const times = (n: number, row: { account: string; key: string }) => Array.from({ length: n }, () => row);

describe('the operator’s usage filters search accounts and keys', () => {
  let upstream: TestUpstream;
  let rp: RedisProxy;
  let browser: Browser;
  let url: string;
  let w: WatchedPage;
  let southPrefix: string;

  beforeAll(async () => {
    upstream = await startUpstream();
    rp = await startRedisProxyProcess({ UPSTREAM_URL: upstream.url, MODELS_FILE: writeModelsFile(), ADMIN_TOKEN });
    url = rp.proxy.url;
    browser = await launchBrowser();
    w = await operatorPage(browser, url, ADMIN_TOKEN, OPERATOR);
    // Two accounts, each with its own key; one named with markup, which a suggestion must show as text.
    const north = await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/accounts', { email: NORTH, name: 'Alice North', tokens: 1000 });
    const south = await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/accounts', { email: SOUTH, name: ATTACK, tokens: 1000 });
    const northKey = await adminCall(url, ADMIN_TOKEN, 'POST', `/admin/accounts/${north.id}/keys`, { name: 'north-script' });
    const southKey = await adminCall(url, ADMIN_TOKEN, 'POST', `/admin/accounts/${south.id}/keys`, { name: 'south-batch' });
    const southSpare = await adminCall(url, ADMIN_TOKEN, 'POST', `/admin/accounts/${south.id}/keys`, { name: 'south-spare' });
    southPrefix = southKey.prefix;
    expect(southPrefix).toMatch(/^sk-/);
    for (let i = 0; i < 3; i++) expect((await chat(url, northKey.key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await chat(url, southKey.key)).status).toBe(200);
    expect((await chat(url, southSpare.key)).status).toBe(200);
    await signIn(w.page, url, OPERATOR);
    await w.page.getByRole('link', { name: 'All usage' }).click();
    await settledPage(w.page, 'All usage');
    await eventually(async () => expect(await shownRows(w.page)).toHaveLength(6), 10_000, 'every account’s six requests');
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await upstream?.close();
  });
  afterEach(() => {
    expectNothingAmiss(w);
  });

  const account = () => w.page.getByLabel('Account', { exact: true });
  const key = () => w.page.getByLabel('Key', { exact: true });
  const apply = () => w.page.getByRole('button', { name: 'Apply filters' }).click();

  test('part of an email suggests the account, and Apply shows only its requests', async () => {
    const { page } = w;
    await account().pressSequentially('north');
    await page.locator(`#f-account_id-list option[value="${NORTH}"]`).waitFor({ state: 'attached' });
    await apply();
    await eventually(
      async () => expect(await shownRows(page)).toEqual(times(3, { account: NORTH, key: 'north-script' })),
      10_000,
      'only the north account’s requests',
    );
    await review(w, 'admin-usage-account-search');
  });

  test('a key’s prefix suggests the key, and Apply shows only its requests', async () => {
    const { page } = w;
    await account().fill('');
    await key().pressSequentially(southPrefix.slice(0, 8));
    const option = page.locator(`#f-key_id-list option[value="${southPrefix}"]`);
    await option.waitFor({ state: 'attached' });
    await expect(option.getAttribute('label')).resolves.toMatch(/^south-batch · key_/);
    // The whole prefix, as picking the suggestion would leave it.
    await key().fill(southPrefix);
    await apply();
    await eventually(
      async () => expect(await shownRows(page)).toEqual(times(2, { account: SOUTH, key: 'south-batch' })),
      10_000,
      'only the south-batch key’s requests',
    );
  });

  test('an account search that matches nothing, or several, says so in the form and leaves the rows as they were', async () => {
    const { page } = w;
    const before = await shownRows(page);
    expect(before).toHaveLength(2);
    await account().fill('nobody-here');
    await apply();
    await expect(page.getByRole('alert').innerText()).resolves.toBe('No account matches “nobody-here”.');
    await page.locator('.loading').waitFor({ state: 'detached' });
    expect(await shownRows(page)).toEqual(before);

    await account().fill('.example');
    await apply();
    await page.getByRole('alert').filter({ hasText: '2 accounts match: pick one from the list.' }).waitFor();
    expect(await shownRows(page)).toEqual(before);
    await review(w, 'admin-usage-several-match');

    // A key name that matches nothing says so too.
    await account().fill('');
    await key().fill('no-such-key');
    await apply();
    await page.getByRole('alert').filter({ hasText: 'No key matches “no-such-key”.' }).waitFor();
    expect(await shownRows(page)).toEqual(before);
  });
});
