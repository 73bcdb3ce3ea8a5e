/**
 * The password form on the console's settings page, in headless Chromium: a wrong current password shows the API's own
 * message; a right one changes the password, says how many other sessions were signed out, and keeps this one.
 */
import type { Browser as Chromium } from 'playwright-core';
import { launchBrowser, openPage, type WatchedPage } from '../helpers/browser';
import { accountWithPassword, Browser, PASSWORD, startConsole, type ConsoleFixture } from '../helpers/console';
import { review, settledPage, signIn } from '../helpers/console-browser';

jest.setTimeout(120_000);

describe('the password form in Chromium', () => {
  let c: ConsoleFixture;
  let chromium: Chromium;
  let w: WatchedPage;

  beforeAll(async () => {
    c = await startConsole('redis');
    await accountWithPassword(c.s.store, 'ada@example.org');
    chromium = await launchBrowser();
    w = await openPage(chromium, c.proxy.url);
  });
  afterAll(async () => {
    await chromium?.close();
    await c?.close();
  });

  test('changes the password from the settings page, signing out the other sessions and keeping this one', async () => {
    const { page } = w;
    const elsewhere = new Browser(c.proxy.url);
    await elsewhere.login('ada@example.org');
    await signIn(page, c.proxy.url, { email: 'ada@example.org', password: PASSWORD });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await settledPage(page, 'Settings');

    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').filter({ hasText: 'The current password is wrong.' }).waitFor();

    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed. 1 other session was signed out.' }).waitFor();
    await review(w, 'password-changed');

    expect((await elsewhere.call('get', '/console/api/me')).status).toBe(401);
    await page.reload();
    await settledPage(page, 'Settings');
    expect((await new Browser(c.proxy.url).login('ada@example.org', 'a brand new passphrase')).status).toBe(200);
    expect(w.outside).toEqual([]);
    expect(w.cspViolations).toEqual([]);
  });
});
