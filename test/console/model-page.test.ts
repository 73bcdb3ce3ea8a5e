/** The public model page in a real browser, without JavaScript: the catalog, readable, accessible and self-contained. */
import type { Browser } from 'playwright-core';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { writeModelsFile } from '../helpers/models-file';
import { launchBrowser, openPage, screenshot, seriousViolations } from '../helpers/browser';
import { navLabels } from '../helpers/console-browser';

jest.setTimeout(60_000);

const MODELS = [
  {
    id: 'meta/llama-3.1-8b-instruct',
    context_length: 131072,
    max_output_tokens: 4096,
    capabilities: { vision: false, developer_role: 'system' },
    quota_weight: { input: 1, cached_input: 0.25, output: 4 },
    pricing: { input: 0.05, output: 0.08, currency: 'USD' },
  },
  {
    id: 'qwen/qwen2.5-vl-7b-instruct',
    owned_by: '<img src=x onerror=alert(1)>',
    context_length: 32768,
    max_output_tokens: 2048,
    capabilities: { tools: false, sampling_parameters: ['temperature', 'top_p'] },
  },
];

describe('the model page in Chromium', () => {
  let proxy: ProxyProcess;
  let browser: Browser;
  beforeAll(async () => {
    proxy = await startProxyProcess({ MODELS_FILE: writeModelsFile(MODELS) });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
  });

  test.each([
    ['desktop', 1280],
    ['phone', 375],
  ])('lists every model with its limits, capabilities and pricing, without JavaScript (%s)', async (name, width) => {
    const { page, context, outside, cspViolations } = await openPage(browser, proxy.url, { width, javaScript: false });
    await page.goto(`${proxy.url}/console/models`);
    const rows = page.locator('table.models tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    // Each model's capabilities are behind its Details toggle, which opens without JavaScript.
    for (const summary of await page.locator('table.models tbody summary').all()) await summary.click();
    const first = await rows.nth(0).innerText();
    expect(first).toContain('meta/llama-3.1-8b-instruct');
    expect(first).toContain('131,072 tokens');
    expect(first).toContain('4,096 tokens');
    expect(first).toMatch(/Developer messages:?\s*yes \(sent as system\)/);
    expect(first).toMatch(/Input:?\s*0.05 USD/);
    // What one token draws from a package: this model's output drains one four times as fast as its input.
    expect(first).toMatch(/Input:?\s*1 package token\s/);
    expect(first).toMatch(/Cached input:?\s*0.25 package tokens/);
    expect(first).toMatch(/Output:?\s*4 package tokens/);
    const second = await rows.nth(1).innerText();
    expect(second).toMatch(/Tools:?\s*no/);
    expect(second).toMatch(/Sampling parameters:?\s*temperature, top_p/);
    expect(second).toContain('not listed');
    expect(second).toMatch(/Output:?\s*1 package token\s/);
    // The owner's name from the models file shows as the characters it is, and no element was made of it.
    expect(second).toContain('by <img src=x onerror=alert(1)>');
    await expect(page.locator('main img').count()).resolves.toBe(0);
    // Nobody is signed in: the page offers itself and the way into the console, and no account's links.
    expect(await navLabels(page)).toEqual(['Models', 'Console']);
    await expect(page.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(0);
    // At 375 px nothing scrolls sideways.
    // A string, as the tests compile without the DOM's types.
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    expect(overflow).toBeLessThanOrEqual(0);

    expect(outside).toEqual([]);
    expect(cspViolations).toEqual([]);
    await screenshot(page, `models-${name}`);
    await context.close();
  });

  // axe runs as a script in the page, so this scan needs JavaScript on; the page itself has none.
  test.each([
    ['desktop', 1280],
    ['phone', 375],
  ])('has no serious or critical accessibility violations (%s)', async (_name, width) => {
    const { page, context } = await openPage(browser, proxy.url, { width });
    await page.goto(`${proxy.url}/console/models`);
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });
});
