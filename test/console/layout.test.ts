/**
 * The finished console's layout in headless Chromium, at desktop (1280 px) and phone (390 px) width: each page is
 * scanned by axe, checked for sideways scrolling and photographed, and the facts a first user trips over are measured:
 * paths and prices on one line, the keys list before any form, both usage filters dropdowns with times to the second
 * and a totals row, a Connect card whose snippets run, sign-in centred, and no failed request while signed out.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser as Chromium, Page } from 'playwright-core';
import { expectNothingAmiss, launchBrowser, openPage, SCREENSHOTS, type WatchedPage } from '../helpers/browser';
import { accountWithPassword, admin, Browser, PASSWORD, startConsole, type ConsoleFixture } from '../helpers/console';
import { chat, review, settledPage, signIn } from '../helpers/console-browser';
import { MODEL } from '../helpers/proxy';

jest.setTimeout(120_000);

const run = promisify(execFile);
const EMAIL = 'layout@example.org';
const WIDTHS = [
  { width: 1280, name: 'desktop' },
  { width: 390, name: 'mobile' },
] as const;

/** How many lines each element matching `selector` takes (a Range's line boxes), in document order. */
function lineCounts(page: Page, selector: string): Promise<number[]> {
  return page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
  })`) as Promise<number[]>;
}

describe('the console’s layout at desktop and phone width', () => {
  let c: ConsoleFixture;
  let chromium: Chromium;
  let url: string;
  let key: string;

  beforeAll(async () => {
    // A catalog as busy as a real one: prices (what wrapped as "0.05 / USD"), cached input, a long id, a list of
    // sampling parameters; enough to squeeze the table's columns at 1280 px.
    c = await startConsole(
      'memory',
      {},
      {
        models: [
          { pricing: { input: 0.05, output: 0.4, currency: 'USD' } },
          {
            id: 'acme/an-unusually-long-model-name-2025-instruct',
            upstream_model: 'Acme/Long-Instruct',
            pricing: { input: 1.25, cached_input: 0.125, output: 10, currency: 'USD' },
            quota_weight: { input: 1, cached_input: 0.25, output: 4 },
            capabilities: {
              tools: true,
              json_mode: false,
              vision: false,
              developer_role: 'system',
              sampling_parameters: ['temperature', 'top_p', 'frequency_penalty'],
            },
          },
        ],
      },
    );
    url = c.proxy.url;
    const account = await accountWithPassword(c.s.store, EMAIL);
    await admin(url).post(`/admin/accounts/${account.id}/packages`, { tokens: 100_000 }).expect(201);
    const member = new Browser(url);
    await member.login(EMAIL);
    key = (await member.call('post', '/console/api/keys', { name: 'layout app' })).body.key;
    for (let i = 0; i < 2; i++) expect((await chat(url, key)).status).toBe(200);
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    await c?.close();
  });

  test('signed out, no page asks for what needs a session: no failed request, nothing logged as an error', async () => {
    const w = await openPage(chromium, url);
    const failed: string[] = [];
    const errors: string[] = [];
    w.page.on('response', (r) => void (r.status() >= 400 && failed.push(`${r.status()} ${new URL(r.url()).pathname}`)));
    w.page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    for (const path of ['/console/', '/console/keys', '/console/usage', '/console/settings', '/console/signin']) {
      await w.page.goto(`${url}${path}`);
      await settledPage(w.page, 'Sign in');
    }
    await w.page.goto(`${url}/console/models`);
    await w.page.getByRole('heading', { level: 1, name: 'Models' }).waitFor();
    expect({ failed, errors }).toEqual({ failed: [], errors: [] });
    await w.context.close();
  });

  for (const { width, name } of WIDTHS) {
    describe(`at ${width} px`, () => {
      let w: WatchedPage;
      beforeAll(async () => {
        w = await openPage(chromium, url, { width });
      });
      afterAll(async () => {
        await w.context.close();
      });
      afterEach(() => {
        expectNothingAmiss(w);
      });

      test('sign-in is centred on the page', async () => {
        await w.page.goto(`${url}/console/signin`);
        await settledPage(w.page, 'Sign in');
        const box = (await w.page.locator('section.auth').boundingBox())!;
        expect(Math.abs(box.x + box.width / 2 - width / 2)).toBeLessThan(2);
        expect(box.width).toBeLessThan(width);
        await review(w, `${name}-sign-in`);
        await signIn(w.page, url, { email: EMAIL, password: PASSWORD });
      });

      test('the overview’s Connect card gives the base URL and snippets that work as copied', async () => {
        const { page } = w;
        await page.goto(`${url}/console/`);
        await settledPage(page, 'Overview');
        await expect(page.getByTestId('base-url').innerText()).resolves.toBe(`${url}/v1`);
        await expect(page.getByTestId('snippet').innerText()).resolves.toContain(`base_url="${url}/v1"`);
        await review(w, `${name}-overview`);
        await page.getByRole('button', { name: 'Copy the base URL' }).click();
        await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
        expect(await page.evaluate('navigator.clipboard.readText()')).toBe(`${url}/v1`);

        // Each snippet, as the copy button gives it, run for real with the key in the variable it names.
        const env = { ...process.env, TOKENMETER_API_KEY: key };
        const copied = async (language: string) => {
          await page.getByRole('group', { name: 'Snippet language' }).getByRole('button', { name: language }).click();
          await page.getByRole('button', { name: `Copy the ${language} snippet` }).click();
          return String(await page.evaluate('navigator.clipboard.readText()'));
        };
        const curl = await copied('curl');
        expect(curl).toContain(`"model":"${MODEL}"`);
        const answer = JSON.parse((await run('sh', ['-c', curl], { env })).stdout);
        expect(answer.choices[0].message.content).toEqual(expect.any(String));
        // Run where node_modules is, so `import OpenAI from 'openai'` resolves as it does in the reader's project.
        const dir = join(SCREENSHOTS, '..', 'snippets');
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'connect.mjs'), await copied('JavaScript'));
        const { stdout } = await run(process.execPath, [join(dir, 'connect.mjs')], { env });
        expect(stdout.trim().length).toBeGreaterThan(0);
      });

      test('API keys: the list comes first; "Create key" opens the form in a dialog', async () => {
        const { page } = w;
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
        await settledPage(page, 'API keys');
        const list = (await page.locator('table.list').boundingBox())!;
        expect(list.y).toBeLessThan(800);
        await expect(page.getByRole('dialog').count()).resolves.toBe(0);
        await review(w, `${name}-keys`);

        await page.getByRole('button', { name: 'Create key' }).click();
        const dialog = page.getByRole('dialog', { name: 'Create a key' });
        await dialog.waitFor();
        expect(await page.evaluate('document.activeElement.id')).toBe('f-name');
        await review(w, `${name}-keys-create`);
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'hidden' });

        // Made in the dialog, the secret is shown there once; Escape does not lose it, "I have stored it" ends it.
        await page.getByRole('button', { name: 'Create key' }).click();
        await dialog.getByLabel('Name', { exact: true }).fill(`${name} notebook`);
        await dialog.getByRole('button', { name: 'Create key' }).click();
        const shown = page.getByRole('dialog', { name: `Your new key “${name} notebook”` });
        await shown.waitFor();
        await shown.getByRole('button', { name: 'Copy' }).click();
        await shown.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
        await review(w, `${name}-keys-new-secret`);
        await page.keyboard.press('Escape');
        await expect(shown.isVisible()).resolves.toBe(true);
        await shown.getByRole('button', { name: 'I have stored it' }).click();
        await shown.waitFor({ state: 'hidden' });
        await page
          .locator('table.list tbody tr')
          .filter({ hasText: `${name} notebook` })
          .waitFor();
      });

      test('usage: key and model are dropdowns, times carry seconds and zone, a totals row sums the rows', async () => {
        const { page } = w;
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
        await settledPage(page, 'Usage');
        await page.locator('table.list tbody tr').first().waitFor();
        for (const label of ['Key', 'Model']) {
          await expect(page.getByLabel(label, { exact: true }).evaluate((el: { tagName: string }) => el.tagName)).resolves.toBe('SELECT');
        }
        await expect(page.getByLabel('Model', { exact: true }).locator('option').allInnerTexts()).resolves.toEqual([
          'All models',
          MODEL,
          'acme/an-unusually-long-model-name-2025-instruct',
        ]);
        const times = await page.locator('table.list tbody td[data-label="Time"]').allInnerTexts();
        for (const t of times) expect(t).toMatch(/\d{2}:\d{2}:\d{2} (UTC|GMT[+-]\d+(:\d\d)?|[A-Z]{3,4})$/);
        // Two requests before, and the two snippets run at each width so far.
        expect(times.length).toBeGreaterThanOrEqual(4);
        const charged = (await page.locator('table.list tbody td[data-label="Charged"]').allInnerTexts()).map((t) =>
          Number(/^[\d,]+/.exec(t)![0].replace(/,/g, '')),
        );
        const total = page.locator('table.list tfoot');
        await expect(total.locator('th').innerText()).resolves.toBe(`Total of ${times.length} requests`);
        await expect(total.locator('td[data-label="Charged"]').innerText()).resolves.toBe(
          charged.reduce((a, b) => a + b, 0).toLocaleString('en-US'),
        );
        await review(w, `${name}-usage`);
      });

      test('settings hold the password change; the empty product center says what to do', async () => {
        const { page } = w;
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
        await settledPage(page, 'Settings');
        await expect(page.getByRole('button', { name: 'Change password' }).count()).resolves.toBe(1);
        await expect(page.getByText(EMAIL, { exact: true }).count()).resolves.toBeGreaterThan(0);
        await review(w, `${name}-settings`);

        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Buy tokens' }).click();
        await settledPage(page, 'Buy tokens');
        await expect(page.getByText('No token packages for sale yet. Ask the operator').count()).resolves.toBe(1);
        await review(w, `${name}-products`);
      });

      test('the model page keeps each endpoint path and each price on one line', async () => {
        const { page } = w;
        await page.goto(`${url}/console/models`);
        await page.getByRole('heading', { level: 1, name: 'Models' }).waitFor();
        const paths = await lineCounts(page, 'table.models td[data-label="Endpoints"] code');
        expect(paths.length).toBeGreaterThan(0);
        expect(paths.every((n) => n === 1)).toBe(true);
        const prices = await lineCounts(page, 'table.models td[data-label="Pricing"] dd');
        expect(prices.length).toBeGreaterThan(0);
        expect(prices.every((n) => n === 1)).toBe(true);
        await review(w, `${name}-models`);
      });
    });
  }
});
