/**
 * Every console page fits a phone, a tablet, a laptop and a wide screen (390, 768, 1280, 1920 px), for a member and an
 * operator, with a store as busy as a real one (long emails, long model ids, many keys and requests): the page never
 * scrolls sideways, every table fits its box, no cell's content is cut (an id shortened with an ellipsis carries the
 * whole of it in its title), an id or a key prefix stays on one line. Each page at each width is photographed;
 * `SCREENSHOTS_DIR=docs/screenshots npx jest test/console/fit.test.ts` writes the pictures there instead.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser as Chromium, Page } from 'playwright-core';
import { MEMBER_PAGES, MODELS_PAGE, OPERATOR_PAGES, navHref, type NavPage } from '../../src/console/console-nav';
import { launchBrowser, openPage, SCREENSHOTS, SCREENSHOTS_TAKEN, type WatchedPage } from '../helpers/browser';
import { accountWithPassword, admin, Browser, PASSWORD, startConsole, type ConsoleFixture } from '../helpers/console';
import { chat, settledPage, signIn } from '../helpers/console-browser';

jest.setTimeout(300_000);

const WIDTHS = [390, 768, 1280, 1920] as const;
const LONG_MODEL = 'meta-llama/Llama-3.3-70B-Instruct-Turbo';
const MEMBER = 'maximilian.featherstonehaugh-worthington@research.example-university.org';
const OPERATOR = 'operations.on-call@platform.example-company.com';
const OUT = process.env.SCREENSHOTS_DIR ? resolve(process.env.SCREENSHOTS_DIR) : join(SCREENSHOTS, 'fit');

/**
 * What does not fit on the page as it is now, one line each (empty: it all fits). A string evaluated in the page, as
 * the tests compile without the DOM's types.
 */
const MISFITS = `(() => {
  const problems = [];
  const name = (el) => {
    const cell = el.closest('td, th');
    const label = cell && (cell.dataset.label || cell.textContent.trim().slice(0, 30));
    return el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '') +
      (label ? ' in "' + label + '"' : '') + ': "' + el.textContent.trim().slice(0, 50) + '"';
  };
  const page = document.scrollingElement;
  if (page.scrollWidth > innerWidth) problems.push('the page scrolls sideways: ' + page.scrollWidth + ' px in ' + innerWidth);
  for (const table of document.querySelectorAll('main table')) {
    if (table.offsetParent === null) continue;
    const box = table.parentElement;
    const width = table.getBoundingClientRect().width;
    if (width > box.clientWidth + 1) problems.push('a table is ' + Math.round(width) + ' px wide in a ' + box.clientWidth + ' px box');
    if (box.scrollWidth > box.clientWidth + 1) problems.push('a table scrolls sideways in its box');
  }
  for (const el of document.querySelectorAll('main td, main th, main td *, main th *')) {
    // What is hidden (a closed Details toggle's content, a screen reader's words) is not cut.
    if (el.offsetParent === null || el.clientWidth === 0 || el.closest('.visually-hidden')) continue;
    if (el.closest('details:not([open])') && !el.closest('summary')) continue;
    if (el.scrollWidth <= el.clientWidth + 1) continue;
    const style = getComputedStyle(el);
    // A shortened id is fine when its title holds the whole of it.
    const titled = el.closest('[title]');
    if (style.textOverflow === 'ellipsis' && titled && titled.title.includes(el.textContent.trim())) continue;
    problems.push((style.overflowX === 'visible' ? 'spills out of its box: ' : 'cut: ') + name(el));
  }
  // Ids, prefixes and paths in a table stay on one line (a model id broken over three lines is read as three words);
  // only the model page's card heading on a phone may break a model id, after its slash.
  for (const code of document.querySelectorAll('main td code, main th code')) {
    if (code.offsetParent === null) continue;
    if (innerWidth < 768 && code.closest('th.model-name') && code.querySelector('wbr')) continue;
    const range = document.createRange();
    range.selectNodeContents(code);
    const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
    if (lines > 1) problems.push('wraps over ' + lines + ' lines: ' + name(code));
  }
  // The navigation takes one row (it may scroll sideways in its own box on a phone).
  const links = [...document.querySelectorAll('nav[aria-label="Main"] a')].filter((a) => a.offsetParent !== null);
  const rows = new Set(links.map((a) => Math.round(a.getBoundingClientRect().top))).size;
  if (rows > 1) problems.push('the navigation takes ' + rows + ' rows');
  // On a phone a record is a card a thumb can pass: the columns that matter, the rest behind its details toggle.
  if (innerWidth < 768) {
    for (const row of document.querySelectorAll('main table.list tbody tr')) {
      const height = row.getBoundingClientRect().height;
      if (height > 420) problems.push('a record’s card is ' + Math.round(height) + ' px tall: "' + row.textContent.trim().slice(0, 40) + '"');
    }
  }
  // Counts agree with their nouns: never "1 tokens".
  const plural = /(^|[^\\d.,])1 (tokens|requests|codes|keys|models|accounts|days)\\b/.exec(document.body.innerText);
  if (plural) problems.push('a count disagrees with its noun: "' + plural[0].trim() + '"');
  return [...new Set(problems)];
})()`;

interface Visit {
  page: NavPage;
  /** A row the page shows once its data is in (a table's row, an endpoint's card). */
  ready?: string;
}

const heading = (label: string) => new RegExp(`^${label}$`);

describe('every console page fits 390, 768, 1280 and 1920 px', () => {
  let c: ConsoleFixture;
  let chromium: Chromium;
  let url: string;

  beforeAll(async () => {
    c = await startConsole(
      'memory',
      {},
      {
        models: [
          { pricing: { input: 0.05, output: 0.4, currency: 'USD' } },
          {
            id: LONG_MODEL,
            upstream_model: 'Llama-3.3-70B-Instruct-Turbo',
            pricing: { input: 0.88, cached_input: 0.44, output: 0.88, currency: 'USD' },
            quota_weight: { input: 1, cached_input: 0.5, output: 3 },
            capabilities: {
              tools: true,
              json_mode: true,
              vision: false,
              developer_role: 'system',
              sampling_parameters: ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty'],
            },
          },
          {
            id: 'acme/an-unusually-long-model-name-2025-instruct',
            upstream_model: 'Acme/Long-Instruct',
            pricing: { input: 1.25, cached_input: 0.125, output: 10, currency: 'USD' },
          },
        ],
      },
    );
    url = c.proxy.url;
    const a = admin(url);
    await accountWithPassword(c.s.store, OPERATOR, 'admin');
    const member = await accountWithPassword(c.s.store, MEMBER);
    await a.post(`/admin/accounts/${member.id}/packages`, { tokens: 2_500_000 }).expect(201);
    await a
      .post(`/admin/accounts/${member.id}/packages`, { tokens: 1, expires_at: Math.floor(Date.now() / 1000) + 3 * 86_400 })
      .expect(201);
    for (let i = 0; i < 6; i++) {
      await a
        .post('/admin/accounts', {
          email: `team-member-${i}.with-a-long-name@subsidiary-${i}.example-holdings.com`,
          name: `Member ${i}`,
          tokens: 1000 * (i + 1),
        })
        .expect(201);
    }
    const browser = new Browser(url);
    await browser.login(MEMBER);
    const keys: string[] = [];
    for (const name of ['production backend service', 'staging', 'notebook experiments for the quarterly report']) {
      keys.push((await browser.call('post', '/console/api/keys', { name })).body.key);
    }
    for (const key of keys) expect((await chat(url, key)).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys[i % keys.length]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: LONG_MODEL, messages: [{ role: 'user', content: 'Say hello.' }] }),
      });
      expect(res.status).toBe(200);
    }
    await a.post('/admin/products', { id: 'starter', name: 'Starter pack', tokens: 50_000, valid_days: 30, price: 500 }).expect(201);
    await a
      .post('/admin/products', { id: 'team-annual', name: 'Team annual (one million tokens)', tokens: 1_000_000, price: 7_900 })
      .expect(201);
    await a.post('/admin/redemption-codes', { product_id: 'starter', count: 3 }).expect(201);
    await a
      .post('/admin/webhooks', { url: 'https://hooks.internal.example-company.com/tokenmeter/billing-events/receiver', events: ['*'] })
      .expect(201);
    mkdirSync(OUT, { recursive: true });
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    await c?.close();
  });

  async function visit(w: WatchedPage, who: string, width: number, { page: p, ready }: Visit): Promise<string[]> {
    const { page } = w;
    await page.goto(`${url}${navHref(p)}`);
    if (p === MODELS_PAGE) await page.getByRole('heading', { level: 1, name: 'Models' }).waitFor();
    else await settledPage(page, heading(p.label));
    if (ready) await page.locator(ready).first().waitFor();
    const name = `${who}-${p.path === '/console' ? 'overview' : p.path.replace('/console/', '').replace('/', '-')}-${width}`;
    if (SCREENSHOTS_TAKEN) await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
    return ((await page.evaluate(MISFITS)) as string[]).map((line) => `${name}: ${line}`);
  }

  async function signedIn(page: Page, email: string): Promise<void> {
    await signIn(page, url, { email, password: PASSWORD });
  }

  const READY: Record<string, string> = {
    '/console/keys': 'table.list tbody tr',
    '/console/usage': 'table.list tbody tr',
    '/console/admin/accounts': 'table.list tbody tr',
    '/console/admin/usage': 'table.list tbody tr',
    '/console/admin/products': 'table.list tbody tr',
    '/console/admin/codes': 'table.list tbody tr',
    '/console/admin/webhooks': 'table.list tbody tr',
  };
  const visits = (pages: readonly NavPage[]): Visit[] => pages.map((page) => ({ page, ready: READY[page.path] }));

  for (const width of WIDTHS) {
    test(`at ${width} px: the model page signed out, every member page and every operator page`, async () => {
      const problems: string[] = [];
      const out = await openPage(chromium, url, { width });
      problems.push(...(await visit(out, 'public', width, { page: MODELS_PAGE })));
      await out.context.close();

      const member = await openPage(chromium, url, { width });
      await signedIn(member.page, MEMBER);
      for (const v of visits([...MEMBER_PAGES, MODELS_PAGE])) problems.push(...(await visit(member, 'member', width, v)));
      await member.context.close();

      const operator = await openPage(chromium, url, { width });
      await signedIn(operator.page, OPERATOR);
      for (const v of visits([MEMBER_PAGES[0], ...OPERATOR_PAGES, MODELS_PAGE])) {
        problems.push(...(await visit(operator, 'operator', width, v)));
      }
      await operator.context.close();
      expect(problems).toEqual([]);
    });
  }
});
