/**
 * Debt, said plainly on the console's overview, in headless Chromium: an answer that cost more than its request
 * reserved leaves the account in debt; the overview shows the negative balance and says the keys are refused until a
 * package pays the debt off.
 */
import type { Browser as Chromium } from 'playwright-core';
import { launchBrowser, openPage, type WatchedPage } from '../helpers/browser';
import { accountWithPassword, PASSWORD, startConsole, type ConsoleFixture } from '../helpers/console';
import { chat, review, signIn } from '../helpers/console-browser';
import { settled } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import { jsonReply } from '../helpers/upstream';

jest.setTimeout(120_000);

describe('debt on the overview in Chromium', () => {
  let c: ConsoleFixture;
  let chromium: Chromium;
  let w: WatchedPage;

  beforeAll(async () => {
    c = await startConsole('redis');
    chromium = await launchBrowser();
    w = await openPage(chromium, c.proxy.url);
  });
  afterAll(async () => {
    await chromium?.close();
    await c?.close();
  });

  test('an account in debt sees its balance below zero and why its keys are refused', async () => {
    const account = await accountWithPassword(c.s.store, 'ada@example.org');
    const key = await keyWithTokens(c.s.store, 100, { accountId: account.id });
    // The upstream counts the prompt far above our bound: the request overdraws the balance, once.
    c.upstream.behave(jsonReply({ promptTokens: 500 }));
    expect((await chat(c.proxy.url, key.secret)).status).toBe(200);
    await settled(c.proxy);
    expect((await chat(c.proxy.url, key.secret)).status).toBe(429);

    const { page } = w;
    await signIn(page, c.proxy.url, { email: 'ada@example.org', password: PASSWORD });
    expect(await page.getByTestId('balance').innerText()).toBe('-405 tokens');
    expect(await page.getByTestId('debt').innerText()).toContain('This account owes 405 tokens');
    expect(await page.getByTestId('debt').innerText()).toContain('Your keys are refused until a package pays the debt off.');
    await review(w, 'overview-in-debt');
    expect(w.outside).toEqual([]);
    expect(w.cspViolations).toEqual([]);
  });
});
