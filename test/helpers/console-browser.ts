/** Steps the console's browser tests share: the admin API as a script calls it, a key's request, and page checks. */
import type { Browser, Page } from 'playwright-core';
import { openPage, screenshot, seriousViolations, type WatchedPage } from './browser';
import { runCli } from './processes';
import { MODEL } from './proxy';

/** What an attacker would name things, hoping the console renders it as markup. */
export const ATTACK = '<img src=x onerror=alert(1)>';

/**
 * The operator's console set up as README says: a page on the proxy at `url` that fails the test on any dialog, and
 * the first admin, made with the CLI.
 */
export async function operatorPage(
  browser: Browser,
  url: string,
  adminToken: string,
  operator: { email: string; password: string },
): Promise<WatchedPage> {
  const w = await openPage(browser, url);
  w.page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  const cli = await runCli(
    ['accounts', 'create', '--email', operator.email, '--role', 'admin', '--password-stdin', '--url', url],
    { TOKENMETER_ADMIN_TOKEN: adminToken },
    `${operator.password}\n`,
  );
  expect(cli).toMatchObject({ code: 0 });
  return w;
}

/** Calls the admin API with `token`; throws with the answer unless it is a 2xx. */
export async function adminCall(url: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** One non-streamed chat completion with `key`. */
export function chat(url: string, key: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }] }),
  });
}

/** A page is done loading when its heading is there and no "Loading…" line is left. */
export async function settledPage(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.locator('.loading').first().waitFor({ state: 'detached' });
}

/** Every page a test reaches: no serious accessibility violation, no sideways scrolling, a screenshot. */
export async function review(w: WatchedPage, name: string): Promise<void> {
  expect({ page: name, violations: await seriousViolations(w.page) }).toEqual({ page: name, violations: [] });
  // A string, as the tests compile without the DOM's types.
  const overflow = Number(await w.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
  expect({ page: name, overflow: overflow > 0 }).toEqual({ page: name, overflow: false });
  await screenshot(w.page, name);
}

export async function signIn(page: Page, url: string, who: { email: string; password: string }): Promise<void> {
  await page.goto(`${url}/console/signin`);
  await settledPage(page, 'Sign in');
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await settledPage(page, 'Overview');
}

const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

/** The words of the main navigation's links, in order. */
export function navLabels(page: Page): Promise<string[]> {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();
}

/**
 * Follows every link of the main navigation in turn and checks that the page it opens is headed by the link's word
 * (a reader should never wonder whether "Catalog" and "Products" are one page). Returns the words, in order.
 */
export async function followNavigation(page: Page): Promise<string[]> {
  const labels = await navLabels(page);
  for (const label of labels) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
    await settledPage(page, exactly(label));
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(label);
  }
  return labels;
}
