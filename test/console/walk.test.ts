/**
 * The console in headless Chromium against the built proxy on Redis, with a test upstream: an account holder signs up,
 * redeems a code, makes and uses a key, sees it in usage and on the chart, revokes it; every page is scanned for
 * accessibility, checked for requests leaving the proxy, and photographed for reviewers.
 */
import type { Browser } from 'playwright-core';
import { expectNothingAmiss, launchBrowser, openPage, type WatchedPage } from '../helpers/browser';
import { eventually } from '../helpers/eventually';
import { ATTACK, adminCall, chat, followNavigation, navLabels, review, settledPage } from '../helpers/console-browser';
import { writeModelsFile } from '../helpers/models-file';
import { MODEL } from '../helpers/proxy';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'console-walk-admin-token';
const EMAIL = 'ada@example.org';
const PASSWORD = 'a long passphrase';

/** Records the text the page writes on canvases (the chart's axis label), as a reader of the picture sees it. */
const RECORD_CANVAS_TEXT = `(() => {
  const texts = (window.__canvasText = []);
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    texts.push(String(text));
    return fill.call(this, text, ...rest);
  };
})()`;

/**
 * Reads the chart's canvas: whether today's column is filled in the first series' colour at 10%, 50% and 80% of the
 * plot's height, and whether the gap between yesterday and today is, halfway up. The plot spans 30 days with half a
 * day's margin each side, so today's bar is centred 29.5/30 of the way across and 29/30 lies between two bars.
 */
const BAR_PROBE = `(() => {
  const canvas = document.querySelector('.chart-box canvas');
  const over = document.querySelector('.chart-box .u-over').getBoundingClientRect();
  const box = canvas.getBoundingClientRect();
  const scale = canvas.width / box.width;
  const ctx = canvas.getContext('2d');
  const blue = (x, y) => {
    const [r, g, b, a] = ctx.getImageData(Math.round((x - box.left) * scale), Math.round((y - box.top) * scale), 1, 1).data;
    return a > 200 && Math.abs(r - 31) < 16 && Math.abs(g - 95) < 16 && Math.abs(b - 191) < 16;
  };
  const today = over.left + over.width * (29.5 / 30);
  const between = over.left + over.width * (29 / 30);
  const above = (f) => over.bottom - over.height * f;
  return { column: [0.1, 0.5, 0.8].map((f) => blue(today, above(f))), between: blue(between, above(0.5)) };
})()`;

describe('the console in Chromium', () => {
  let upstream: TestUpstream;
  let rp: RedisProxy;
  let browser: Browser;
  let url: string;
  let w: WatchedPage;
  const dialogs: string[] = [];

  beforeAll(async () => {
    upstream = await startUpstream();
    rp = await startRedisProxyProcess({
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      ADMIN_TOKEN,
      ACCOUNT_REGISTRATION: 'open',
    });
    url = rp.proxy.url;
    browser = await launchBrowser();
    w = await openPage(browser, url);
    await w.page.addInitScript(RECORD_CANVAS_TEXT);
    // An alert() would mean a user string ran as script.
    w.page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await upstream?.close();
  });
  afterEach(() => {
    // Checked after every step: nothing left the proxy, the CSP blocked nothing, nothing ran as script.
    expectNothingAmiss(w);
    expect(dialogs).toEqual([]);
  });

  let secret: string;

  test('sign up (with a name that is markup) and see a zero balance', async () => {
    const { page } = w;
    await page.goto(`${url}/`);
    await settledPage(page, 'Sign in');
    expect(new URL(page.url()).pathname).toBe('/console/signin');
    await review(w, 'sign-in');

    await page.getByRole('link', { name: 'Sign up' }).click();
    await settledPage(page, 'Create an account');
    await page.getByLabel('Name').fill(ATTACK);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('short');
    await review(w, 'sign-up');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();

    await settledPage(page, 'Overview');
    await expect(page.getByTestId('balance').innerText()).resolves.toMatch(/^0\s+tokens$/);
    await expect(page.getByText('You have no tokens yet.').count()).resolves.toBe(1);
    await page.getByRole('heading', { name: 'Tokens charged per day' }).waitFor();
    await expect(page.getByText('No requests in the last 30 days.').count()).resolves.toBe(1);
    await review(w, 'overview-empty');
  });

  test('redeem a code in the product center', async () => {
    const { page } = w;
    await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/products', {
      id: 'starter',
      name: 'Starter',
      tokens: 50_000,
      valid_days: 30,
      price: 500,
    });
    await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/products', { id: 'team', name: `Team ${ATTACK}`, tokens: 1_000_000, price: 7_900 });
    const [{ code }] = (await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/redemption-codes', { product_id: 'starter', count: 1 })).data;

    // The product list says whether Checkout is configured: the page asks nothing else (no probing POST /checkout).
    const posts: string[] = [];
    const onRequest = (r: { method(): string; url(): string }) => void (r.method() === 'POST' && posts.push(new URL(r.url()).pathname));
    page.on('request', onRequest);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Buy tokens' }).click();
    await settledPage(page, 'Buy tokens');
    page.off('request', onRequest);
    expect(posts).toEqual([]);
    await expect(page.getByRole('heading', { name: `Team ${ATTACK}` }).count()).resolves.toBe(1);
    await expect(page.getByText('$79.00').count()).resolves.toBe(1);
    // Without Stripe configured there is nothing to click through to: the page says to ask for a code.
    await expect(page.getByRole('button', { name: /^Buy/ }).count()).resolves.toBe(0);
    await expect(page.getByText('Card payment is not set up on this server').count()).resolves.toBe(1);

    await page.getByRole('textbox', { name: 'Code', exact: true }).fill('not-a-real-code');
    await page.getByRole('button', { name: 'Redeem' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    // The API's own message, not a status line or [object Object].
    expect(await refusal.innerText()).toMatch(/code/i);
    expect(await refusal.innerText()).not.toContain('[object');

    await page.getByRole('textbox', { name: 'Code', exact: true }).fill(code);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('status').filter({ hasText: 'Added 50,000 tokens' }).waitFor();
    await review(w, 'products');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await settledPage(page, 'Overview');
    await expect(page.getByTestId('balance').innerText()).resolves.toMatch(/^50,000\s+tokens$/);
  });

  test('create a key named with markup; its secret is shown once and copied', async () => {
    const { page } = w;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await settledPage(page, 'API keys');
    await expect(page.getByText('No keys yet.').count()).resolves.toBe(1);
    // The list comes first; the form opens in a dialog.
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    await page.getByLabel('Name').fill(ATTACK);
    await page.getByLabel('Spending cap (tokens)').fill('20000');
    // The models come from GET /console/api/models, offered as checkboxes.
    await page.getByRole('checkbox', { name: MODEL }).check();
    // Rate limits the self-service API accepts (issue 13): a key of one's own may be held to them.
    await page.getByLabel('Requests per minute').fill('60');
    await page.getByLabel('Requests at once').fill('2');
    // A budget per UTC period (issue 22), shown in the list with what the period spent.
    await page.getByLabel('Tokens per period').fill('100000');
    await page.getByLabel('Period', { exact: true }).selectOption('week');
    await review(w, 'keys-form');
    await dialog.getByRole('button', { name: 'Create key' }).click();

    await page.getByText('it will not be shown again').waitFor();
    const field = page.getByLabel('Secret of the new key');
    secret = await field.inputValue();
    expect(secret).toMatch(/^sk-/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await review(w, 'keys-new-secret');

    // The name shows as the characters typed, and no element was made of it.
    const row = page.locator('table.list tbody tr').first();
    await expect(row.locator('td').first().innerText()).resolves.toBe(ATTACK);
    await expect(page.locator('main img').count()).resolves.toBe(0);
    // The cap, models, limits and budget are behind the row's Details toggle at this width (under the open dialog).
    await expect(row.locator('td.row-more').textContent()).resolves.toMatch(/Cap\s*20,000/);
    await expect(row.locator('td[data-label="Models"]').innerText()).resolves.toBe(MODEL);
    await expect(row.locator('td[data-label="Limits"]').innerText()).resolves.toBe('60 requests/min, 2 at once');
    await expect(row.locator('td[data-label="Budget"]').innerText()).resolves.toBe('0 of 100,000 this week');

    // The secret lives only in the page's memory: not in storage, the URL or a cookie the page can read.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const stored = String(await page.evaluate('JSON.stringify([localStorage, sessionStorage, location.href, document.cookie])'));
    expect(stored).not.toContain(secret);
    await expect(page.getByLabel('Secret of the new key').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(secret);
  });

  test('a request with the key shows on the usage page and the overview chart', async () => {
    const { page } = w;
    const res = await chat(url, secret);
    expect(res.status).toBe(200);
    const charged = ((await res.json()) as { usage: { total_tokens: number } }).usage.total_tokens;

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await settledPage(page, 'Usage');
    const rows = page.locator('table.list tbody tr');
    await rows.first().waitFor();
    await expect(rows.count()).resolves.toBe(1);
    const text = await rows.first().innerText();
    expect(text).toContain(MODEL);
    expect(text).toContain(ATTACK);
    expect(text).toContain(String(charged));

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const csv = await (await download).createReadStream().then(async (s) => {
      let out = '';
      for await (const chunk of s) out += chunk;
      return out;
    });
    expect(csv.split('\r\n')[0]).toMatch(/^time,key_id,key,model,prompt_tokens,completion_tokens,charged_tokens/);
    expect(csv.split('\r\n')[0]).toMatch(/,status,endpoint,request_id$/);
    expect(csv.split('\r\n')[1]).toMatch(/,chat,[^,]+$/);
    expect(csv.split('\r\n')[0]).toMatch(/,estimated,cached_tokens,reasoning_tokens,stream,/);
    expect(csv).toContain(`,${MODEL},`);
    await review(w, 'usage');

    // The chart reads the daily rollups, which the rollup follower fills about a second after settlement: the
    // Overview is opened once they hold the request (asked with the page's own session), as a user coming back later.
    await eventually(
      async () => expect(await page.evaluate(`fetch('/console/api/usage/daily').then((r) => r.json()).then((b) => b.data.length)`)).toBe(1),
      10_000,
      'the rollup follower to add the request',
    );
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await settledPage(page, 'Overview');
    await page.locator('.chart-box canvas').waitFor();
    // A day's use is one bar standing on the axis, not a point joined to yesterday's zero by a month-long ramp.
    expect(await page.evaluate(BAR_PROBE)).toEqual({ column: [true, true, true], between: false });
    // The y axis says what it counts; the legend names the model in its colour, with its total before any hover.
    expect(await page.evaluate('window.__canvasText')).toContain('tokens');
    const legend = await page.locator('.u-legend').innerText();
    expect(legend).toContain(MODEL);
    expect(legend).toContain(`${charged} tokens`);
    expect(legend).not.toContain('—');
    expect(
      await page.evaluate(`getComputedStyle(document.querySelector('.u-legend .u-series:nth-child(2) .u-marker')).backgroundColor`),
    ).toBe('rgb(31, 95, 191)');
    await page.getByText('The numbers behind the chart').click();
    const today = new Date().toISOString().slice(0, 10);
    await expect(page.locator('.chart details table tbody tr').first().innerText()).resolves.toMatch(
      new RegExp(`${today}\\s+${MODEL.replace('/', '\\/')}\\s+1\\s+${charged}`),
    );
    await expect(page.getByTestId('balance').innerText()).resolves.toContain((50_000 - charged).toLocaleString('en-US'));
    await review(w, 'overview');
  });

  test('revoke the key after confirming; the next request is refused with 401', async () => {
    const { page } = w;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await settledPage(page, 'API keys');
    // Revoking is in the key's More menu, and asks first.
    await page.getByRole('button', { name: `More actions for ${ATTACK}` }).click();
    await page.getByRole('menuitem', { name: 'Revoke' }).click();
    await page.getByRole('button', { name: 'Revoke key' }).waitFor();
    await review(w, 'keys-revoke-confirm');
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.locator('table.list .status.revoked').waitFor();
    expect((await chat(url, secret)).status).toBe(401);
    await review(w, 'keys');
  });

  test('the keys page works from the keyboard alone', async () => {
    const { page } = w;
    const focused = async () => String(await page.evaluate('document.activeElement.id || document.activeElement.innerText'));
    // Focus moves in an effect just after the render: give it a moment.
    const focusReaches = async (name: string) => {
      for (let i = 0; i < 250 && (await focused()) !== name; i++) await page.waitForTimeout(20);
      expect(await focused()).toBe(name);
    };
    const tabTo = async (name: string) => {
      for (let i = 0; i < 40 && (await focused()) !== name; i++) await page.keyboard.press('Tab');
      expect(await focused()).toBe(name);
    };
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await settledPage(page, 'Overview');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).focus();
    await page.keyboard.press('Enter');
    await settledPage(page, 'API keys');
    // Navigation moves focus to the page's heading; the next Tab is "Create key", whose dialog takes focus to its first field.
    await focusReaches('API keys');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Create key');
    await page.keyboard.press('Enter');
    await focusReaches('f-name');
    await page.keyboard.type('keyboard');
    await page.keyboard.press('Enter');
    await page.getByText('it will not be shown again').waitFor();
    await tabTo('Copy');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    await tabTo('I have stored it');
    await page.keyboard.press('Enter');
    // The dialog gives focus back to the button that opened it.
    await focusReaches('Create key');

    await page.getByRole('button', { name: 'More actions for keyboard' }).focus();
    await page.keyboard.press('Enter');
    // The menu's item takes focus, then the confirmation; Enter answers each.
    await focusReaches('Revoke');
    await page.keyboard.press('Enter');
    await focusReaches('Revoke key');
    await page.keyboard.press('Enter');
    await page.locator('table.list tbody tr').filter({ hasText: 'keyboard' }).locator('.status.revoked').waitFor();
  });

  test('a package that expires within a week is highlighted on the overview', async () => {
    const { page } = w;
    const [account] = (await adminCall(url, ADMIN_TOKEN, 'GET', `/admin/accounts?search=${EMAIL}`)).data;
    const inThreeDays = Math.floor(Date.now() / 1000) + 3 * 86_400;
    await adminCall(url, ADMIN_TOKEN, 'POST', `/admin/accounts/${account.id}/packages`, { tokens: 1000, expires_at: inThreeDays });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await settledPage(page, 'Overview');
    const soon = page.locator('table.list tbody tr.soon');
    await soon.waitFor();
    await expect(soon.count()).resolves.toBe(1);
    await expect(soon.innerText()).resolves.toMatch(/1,000 on[\s\S]*expires soon/);
    // The 30-day package from the code is not marked.
    await expect(page.locator('table.list tbody tr').filter({ hasText: '50,000 on' }).locator('.badge').count()).resolves.toBe(0);
  });

  test('each navigation word is its page’s heading; the model page keeps the navigation, the account and Sign out', async () => {
    const { page } = w;
    await page.goto(`${url}/console/`);
    await settledPage(page, 'Overview');
    const labels = await followNavigation(page);
    expect(labels).toEqual(['Overview', 'API keys', 'Buy tokens', 'Usage', 'Settings', 'Models']);
    // The last link led to the model page, which the server renders: the same links, the account, Sign out.
    expect(new URL(page.url()).pathname).toBe('/console/models');
    expect(await navLabels(page)).toEqual(labels);
    await expect(page.getByRole('banner').getByText(EMAIL).count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(1);
    await review(w, 'models-signed-in');
  });

  test('the icon the pages link answers, and so does /favicon.ico', async () => {
    const { page } = w;
    for (const path of ['/console/', '/console/models']) {
      await page.goto(`${url}${path}`);
      const href = await page.locator('link[rel="icon"]').getAttribute('href');
      for (const icon of [href, '/favicon.ico']) {
        const res = await page.request.get(`${url}${icon}`);
        expect({ icon, status: res.status(), type: res.headers()['content-type'] }).toEqual({
          icon,
          status: 200,
          type: expect.stringMatching(/^image\/svg\+xml/),
        });
      }
    }
  });

  test('the checkout result page after a redirect from Stripe', async () => {
    const { page } = w;
    await page.goto(`${url}/console/?checkout=success`);
    await settledPage(page, 'Thank you for your purchase');
    await review(w, 'checkout-result');
    await page.goto(`${url}/console/?checkout=cancelled`);
    await settledPage(page, 'Payment cancelled');
  });

  test('works at 375 px wide', async () => {
    const phone = await openPage(browser, url, { width: 375 });
    await phone.context.addCookies(await w.context.cookies());
    for (const [path, heading, name] of [
      ['/console/', 'Overview', 'phone-overview'],
      ['/console/keys', 'API keys', 'phone-keys'],
      ['/console/usage', 'Usage', 'phone-usage'],
      ['/console/models', 'Models', 'phone-models-signed-in'],
    ] as const) {
      await phone.page.goto(`${url}${path}`);
      await settledPage(phone.page, heading);
      await review(phone, name);
    }
    expect(phone.outside).toEqual([]);
    expect(phone.missing).toEqual([]);
    await phone.context.close();
  });

  test('sign out ends the session', async () => {
    const { page } = w;
    await page.goto(`${url}/console/`);
    await settledPage(page, 'Overview');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await settledPage(page, 'Sign in');
    await page.goto(`${url}/console/keys`);
    await settledPage(page, 'Sign in');
  });
});
