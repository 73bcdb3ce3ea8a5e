/**
 * Debian's Chromium driven by playwright-core (which downloads no browser), for the console's tests: a page that
 * records requests leaving the proxy and CSP violations, an accessibility scan, and screenshots for reviewers.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where screenshots go (git-ignored); docs/ keeps copies of two of them. */
export const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'console');
/**
 * Whether the pages are photographed: for a reviewer on a developer's machine. SCREENSHOTS=0 (CI: nobody sees them
 * there) leaves them out, a tenth of the console suites' time; every check on the page is made either way.
 */
export const SCREENSHOTS_TAKEN = process.env.SCREENSHOTS !== '0';

/**
 * Starts Chromium, or fails with one line saying what is missing and how to install it: every browser suite calls this
 * in its beforeAll, so a machine without Chromium sees that line on each of their tests, not playwright's long error.
 * Never a skip: CI must run these tests.
 */
export async function launchBrowser(executablePath = CHROMIUM): Promise<Browser> {
  try {
    accessSync(executablePath, constants.X_OK);
  } catch {
    const missing = new Error(
      `Chromium not found at ${executablePath}; the console's browser tests need it: apt-get install -y chromium (or set CHROMIUM_PATH to a Chromium)`,
    );
    // Jest prints the stack: make it the one line.
    missing.stack = missing.message;
    throw missing;
  }
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** URLs the page requested outside `origin` (blob: and data: URLs are the page's own). */
  outside: string[];
  /** Console messages about Content-Security-Policy violations. */
  cspViolations: string[];
  /** Paths on `origin` the page asked for that answered 404 (an icon, a stylesheet, an asset). */
  missing: string[];
}

/** What every console test checks after each step: nothing left the proxy, the CSP blocked nothing, nothing 404'd. */
export function expectNothingAmiss(w: WatchedPage): void {
  expect(w.outside).toEqual([]);
  expect(w.cspViolations).toEqual([]);
  expect(w.missing).toEqual([]);
}

export async function openPage(
  browser: Browser,
  origin: string,
  options: { width?: number; javaScript?: boolean } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 800 },
    javaScriptEnabled: options.javaScript ?? true,
    acceptDownloads: true,
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  const outside: string[] = [];
  const cspViolations: string[] = [];
  const missing: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404 && r.url().startsWith(`${origin}/`)) missing.push(new URL(r.url()).pathname);
  });
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:')) outside.push(url);
  });
  page.on('console', (m) => {
    if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return { page, context, outside, cspViolations, missing };
}

/** axe-core's serious and critical violations on the page as it is now, one line each (empty: none). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export async function screenshot(page: Page, name: string): Promise<string | undefined> {
  if (!SCREENSHOTS_TAKEN) return undefined;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
