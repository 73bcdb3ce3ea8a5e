/**
 * The operator's console in headless Chromium against the built proxy on Redis: the first admin, made with the CLI,
 * signs in, creates a product, generates codes and downloads them once, sees them redeemed, finds an account and
 * disables it (its keys stop at once), and reads the usage across accounts. Every page is scanned and photographed.
 */
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { expectNothingAmiss, launchBrowser, openPage, type WatchedPage } from '../helpers/browser';
import {
  ATTACK,
  adminCall,
  operatorPage,
  chat,
  followNavigation,
  navLabels,
  review,
  settledPage,
  signIn,
} from '../helpers/console-browser';
import { writeModelsFile } from '../helpers/models-file';
import { MODEL } from '../helpers/proxy';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'console-operator-admin-token';
const OPERATOR = { email: 'ops@example.org', password: 'operator passphrase' };
const MEMBER = { email: 'mallory@example.org', password: 'member passphrase' };

describe('the operator console in Chromium', () => {
  let upstream: TestUpstream;
  let rp: RedisProxy;
  let browser: Browser;
  let url: string;
  let w: WatchedPage;
  let memberKey: string;
  let memberId: string;
  let codes: string[];

  beforeAll(async () => {
    upstream = await startUpstream();
    rp = await startRedisProxyProcess({ UPSTREAM_URL: upstream.url, MODELS_FILE: writeModelsFile(), ADMIN_TOKEN });
    url = rp.proxy.url;
    browser = await launchBrowser();
    // The first admin comes from the CLI, as README says.
    w = await operatorPage(browser, url, ADMIN_TOKEN, OPERATOR);
    // A member with a name that is markup, a package and a key, made through the admin API as a script would.
    const member = await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/accounts', { ...MEMBER, name: ATTACK, tokens: 1000 });
    memberId = member.id;
    memberKey = (await adminCall(url, ADMIN_TOKEN, 'POST', `/admin/accounts/${member.id}/keys`, { name: 'script' })).key;
    // 60 requests: more than one page of the usage table (50).
    for (let i = 0; i < 60; i++) expect((await chat(url, memberKey)).status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await upstream?.close();
  });
  afterEach(() => {
    expectNothingAmiss(w);
  });

  const NAVIGATION = [
    'Overview',
    'API keys',
    'Buy tokens',
    'Usage',
    'Settings',
    'Accounts',
    'Products',
    'Redemption codes',
    'All usage',
    'Webhooks',
    'Upstreams',
    'Models',
  ];

  test('an admin signs in and sees the operator pages', async () => {
    await signIn(w.page, url, OPERATOR);
    for (const name of ['Accounts', 'Products', 'Redemption codes', 'All usage', 'Webhooks', 'Upstreams']) {
      await expect(w.page.getByRole('navigation').getByRole('link', { name }).count()).resolves.toBe(1);
    }
    // Each word names one page, and is that page's heading: the member's "Buy tokens" is not the operator's "Products".
    expect(await followNavigation(w.page)).toEqual(NAVIGATION);
  });

  test('create a product, then edit and deactivate it', async () => {
    const { page } = w;
    await page.getByRole('navigation').getByRole('link', { name: 'Products', exact: true }).click();
    await settledPage(page, 'Products');
    await expect(page.getByText('No products yet.').count()).resolves.toBe(1);
    const form = page.getByRole('form', { name: 'New product' });
    await form.getByLabel('Name').fill('Starter');
    await form.getByLabel('Tokens').fill('50000');
    await form.getByLabel('Valid for (days)').fill('30');
    await form.getByLabel('Price').fill('5');
    await form.getByRole('button', { name: 'Create product' }).click();
    const row = page.locator('table.list tbody tr').filter({ hasText: 'Starter' });
    await row.waitFor();
    await expect(row.innerText()).resolves.toMatch(/50,000[\s\S]*valid 30 days[\s\S]*\$5\.00[\s\S]*on sale/);
    await review(w, 'admin-products');

    await row.getByRole('button', { name: 'Edit Starter' }).click();
    const edit = page.getByRole('form', { name: 'Edit Starter' });
    await edit.getByLabel('Price').fill('6.5');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.locator('table.list tbody tr').filter({ hasText: '$6.50' }).waitFor();
    await page.getByRole('button', { name: 'Deactivate Starter' }).click();
    await page.locator('table.list tbody tr').filter({ hasText: 'inactive' }).waitFor();
    await page.getByRole('button', { name: 'Activate Starter' }).click();
    await page.locator('table.list tbody tr').filter({ hasText: 'on sale' }).waitFor();
  });

  test('a price is typed in the currency’s main unit and kept exactly in its minor unit, or refused', async () => {
    const { page } = w;
    await page.getByRole('navigation').getByRole('link', { name: 'Products', exact: true }).click();
    await settledPage(page, 'Products');
    const form = page.getByRole('form', { name: 'New product' });
    const create = async (name: string, currency: string, price: string) => {
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Tokens').fill('1000');
      await form.getByLabel('Currency').fill(currency);
      await form.getByLabel('Price').fill(price);
      await form.getByRole('button', { name: 'Create product' }).click();
    };
    const row = (name: string) => page.locator('table.list tbody tr').filter({ hasText: name });
    await create('Cents', 'usd', '19.99');
    await row('Cents').waitFor();
    // 500 yen is 500 of Stripe's yen, not 50,000: the currency's own decimals decide.
    await create('Yen', 'jpy', '500');
    await row('Yen').waitFor();
    const stored = async () =>
      Object.fromEntries(
        ((await adminCall(url, ADMIN_TOKEN, 'GET', '/admin/products')).data as { name: string; price: number }[]).map((p) => [
          p.name,
          p.price,
        ]),
      );
    expect(await stored()).toEqual({ Starter: 650, Cents: 1999, Yen: 500 });
    await expect(row('Cents').locator('td[data-label="Price"]').innerText()).resolves.toBe('$19.99');
    await expect(row('Yen').locator('td[data-label="Price"]').innerText()).resolves.toBe('¥500');
    // Editing shows the price as it was typed, not as a float.
    await row('Cents').getByRole('button', { name: 'Edit Cents' }).click();
    await expect(page.getByRole('form', { name: 'Edit Cents' }).getByLabel('Price').inputValue()).resolves.toBe('19.99');
    await row('Cents').getByRole('button', { name: 'Edit Cents' }).click();

    // More decimals than the currency has are refused, not rounded, and nothing is created.
    await create('Fraction', 'usd', '6.505');
    await form.getByRole('alert').filter({ hasText: 'at most 2 decimals' }).waitFor();
    await create('Fraction', 'jpy', '5.5');
    await form.getByRole('alert').filter({ hasText: 'at most 0 decimals' }).waitFor();
    expect(await stored()).toEqual({ Starter: 650, Cents: 1999, Yen: 500 });
    await review(w, 'admin-products-prices');
  });

  test('generate codes, download them once as a text file, and see one redeemed', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'Redemption codes' }).click();
    await settledPage(page, 'Redemption codes');
    await page.getByLabel('Product').selectOption({ label: 'Starter (50,000 tokens)' });
    await page.getByLabel('How many').fill('3');
    await page.getByRole('button', { name: 'Generate' }).click();
    await page.getByText('they are shown only this once').waitFor();
    await review(w, 'admin-codes-generated');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download codes (.txt)' }).click();
    const file = await (await download).path();
    codes = readFileSync(file, 'utf8').trim().split('\n');
    expect(codes).toHaveLength(3);
    expect(new Set(codes).size).toBe(3);
    // Gone from the page once downloaded: the server keeps only hashes, and so does the console.
    await expect(page.getByRole('button', { name: 'Download codes (.txt)' }).count()).resolves.toBe(0);
    for (const code of codes) expect(await page.content()).not.toContain(code);
    await expect(page.locator('table.list tbody tr').filter({ hasText: 'active' }).count()).resolves.toBe(3);

    // The member redeems one of them in a browser of their own.
    const member = await openPage(browser, url);
    await signIn(member.page, url, MEMBER);
    await member.page.getByRole('link', { name: 'Buy tokens' }).click();
    await settledPage(member.page, 'Buy tokens');
    await member.page.getByRole('textbox', { name: 'Code', exact: true }).fill(codes[0]);
    await member.page.getByRole('button', { name: 'Redeem' }).click();
    await member.page.getByRole('status').filter({ hasText: 'Added 50,000 tokens' }).waitFor();
    // A member has no operator pages: none in the navigation, and the address alone shows a refusal, no data.
    await expect(member.page.getByRole('navigation').getByRole('link', { name: 'Accounts' }).count()).resolves.toBe(0);
    await member.page.goto(`${url}/console/admin/accounts`);
    await member.page.getByRole('alert').filter({ hasText: 'This page is for operators only.' }).waitFor();
    await expect(member.page.locator('table').count()).resolves.toBe(0);
    expect(member.outside).toEqual([]);
    await member.context.close();

    await page.reload();
    await settledPage(page, 'Redemption codes');
    const redeemed = page.locator('table.list tbody tr').filter({ hasText: 'redeemed' });
    await expect(redeemed.count()).resolves.toBe(1);
    // Who redeemed it, by email (the account id is only its title), and the product by name.
    await expect(redeemed.locator('td[data-label="Redeemed by"]').innerText()).resolves.toMatch(new RegExp(`^${MEMBER.email}\\s+on `));
    await expect(redeemed.locator('td[data-label="Code id"]').innerText()).resolves.toContain('Starter');
    await review(w, 'admin-codes');
  });

  test('find an account, see its balance, grant it tokens and disable it: its keys stop at once', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'Accounts' }).click();
    await settledPage(page, 'Accounts');
    // The list carries the balances: the page asks for no account one by one.
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => void asked.push(new URL(r.url()).pathname);
    page.on('request', onRequest);
    await page.getByLabel('Search by email or name').fill('mallory');
    const answered = page.waitForResponse((r) => r.url().includes('/console/api/admin/accounts?search=mallory'));
    await page.getByRole('button', { name: 'Search' }).click();
    await answered;
    const rows = page.locator('table.list tbody tr');
    // The search's answer: one row, the member's (the operator's own account is filtered out).
    await rows.filter({ hasText: MEMBER.email }).waitFor();
    await page.locator('table.list tbody tr:nth-child(2)').waitFor({ state: 'detached' });
    page.off('request', onRequest);
    expect(asked.filter((p) => p.startsWith('/console/api/admin/accounts/'))).toEqual([]);
    await expect(rows.count()).resolves.toBe(1);
    // The markup name shows as its characters, and no element was made of it.
    await expect(rows.first().innerText()).resolves.toContain(ATTACK);
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await expect(rows.first().innerText()).resolves.toMatch(/5\d,\d{3}/);
    const balance = async () =>
      Number((await rows.first().locator('td[data-label="Balance"]').innerText()).split(' ')[0].replace(/,/g, ''));
    const before = await balance();

    await page.getByRole('button', { name: `Grant tokens to ${MEMBER.email}` }).click();
    const grant = page.getByRole('form', { name: `Grant a package to ${MEMBER.email}` });
    await grant.getByLabel('Tokens').fill('1000');
    await grant.getByRole('button', { name: 'Grant' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Granted 1,000 tokens to ${MEMBER.email}` })
      .waitFor();
    // The row reads its account again before saying so: the balance shown is the new one.
    expect(await balance()).toBe(before + 1000);

    // Disabling is in the account's More menu, and asks first; enabling again is a button.
    await page.getByRole('button', { name: `More actions for ${MEMBER.email}` }).click();
    await page.getByRole('menuitem', { name: 'Disable' }).click();
    await page
      .getByRole('group', { name: `Confirm disabling ${MEMBER.email}` })
      .getByRole('button', { name: 'Disable account' })
      .click();
    await page.getByRole('button', { name: `Enable ${MEMBER.email}` }).waitFor();
    await expect(rows.first().locator('.status').innerText()).resolves.toBe('disabled');
    await review(w, 'admin-accounts');
    const refused = await chat(url, memberKey);
    expect([401, 403]).toContain(refused.status);
  });

  test('the usage across accounts lists the member’s requests, newest first, a page at a time, and as CSV', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'All usage' }).click();
    await settledPage(page, 'All usage');
    const rows = page.locator('table.list tbody tr');
    await rows.first().waitFor();
    await expect(rows.count()).resolves.toBe(50);
    await expect(rows.first().innerText()).resolves.toContain(MODEL);
    // Who made the request in words: the member's email and the key's name, not their ids.
    await expect(rows.first().locator('td[data-label="Account"]').innerText()).resolves.toBe(MEMBER.email);
    await expect(rows.first().locator('td[data-label="Key"]').innerText()).resolves.toBe('script');
    await expect(rows.first().locator('td[data-label="Account"] span').getAttribute('title')).resolves.toBe(memberId);
    // A time and an email each stay on one line (once a time took five).
    const lineBoxes = (cell: string) =>
      page.evaluate(`document.querySelector('table.list tbody tr td[data-label="${cell}"] :first-child').getClientRects().length`);
    expect([await lineBoxes('Time'), await lineBoxes('Account')]).toEqual([1, 1]);
    await review(w, 'admin-usage');

    await page.getByRole('button', { name: 'Show older requests' }).click();
    await rows.nth(59).waitFor();
    await expect(rows.count()).resolves.toBe(60);
    await expect(page.getByRole('button', { name: 'Show older requests' }).count()).resolves.toBe(0);

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const lines = readFileSync((await (await download).path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(lines[0]).toMatch(/^time,account_id,key_id,/);
    expect(lines[0]).toMatch(/,account_email,request_id$/);
    expect(lines[1]).toContain(`,${MEMBER.email},`);
    const times = lines.slice(1).map((l) => l.split(',')[0]);
    expect(times).toHaveLength(60);
    // Newest first, each request once.
    expect([...times].sort().reverse()).toEqual(times);
    expect(new Set(lines.slice(1).map((l) => l.split(',').at(-1))).size).toBe(60);
  });

  test('one account’s usage pages back before a cursor to exactly its 60 requests, then stops', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'All usage' }).click();
    await settledPage(page, 'All usage');
    const older = page.waitForResponse((r) => r.url().includes('before='));
    await page.getByLabel('Account', { exact: true }).fill(memberId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const rows = page.locator('table.list tbody tr');
    await rows.nth(49).waitFor();
    await page.getByRole('button', { name: 'Show older requests' }).click();
    await older;
    await rows.nth(59).waitFor();
    await expect(rows.count()).resolves.toBe(60);
    await expect(page.getByRole('button', { name: 'Show older requests' }).count()).resolves.toBe(0);
  });

  test('the model page shows the operator’s navigation, and its Sign out (a plain form) ends the session', async () => {
    const { page } = w;
    await page.goto(`${url}/console/models`);
    await settledPage(page, 'Models');
    expect(await navLabels(page)).toEqual(NAVIGATION);
    await review(w, 'models-operator');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await settledPage(page, 'Sign in');
    expect(new URL(page.url()).pathname).toBe('/console/signin');
    // Signed out, the model page offers only itself and the way in.
    await page.goto(`${url}/console/models`);
    await settledPage(page, 'Models');
    expect(await navLabels(page)).toEqual(['Models', 'Console']);
    await expect(page.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(0);
    await page.goto(`${url}/console/admin/accounts`);
    await settledPage(page, 'Sign in');
  });
});
