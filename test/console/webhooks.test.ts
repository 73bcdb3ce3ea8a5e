/**
 * The operator's webhooks page in headless Chromium against the built proxy on Redis: an admin creates an endpoint
 * and sees its signing secret once, sees the deliveries to it and their attempts, and redelivers one by hand; the
 * receiver gets it again, same id, signed with that secret; then deletes the endpoint after a confirmation. A URL
 * that is markup is shown as text.
 */
import type { Browser } from 'playwright-core';
import { verifyWebhook } from '../../src/events/signature';
import { expectNothingAmiss, launchBrowser, type WatchedPage } from '../helpers/browser';
import { ATTACK, adminCall, operatorPage, review, settledPage, signIn } from '../helpers/console-browser';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'console-webhooks-admin-token';
const OPERATOR = { email: 'hooks@example.org', password: 'operator passphrase' };

describe('the webhooks page in Chromium', () => {
  let upstream: TestUpstream;
  let receiver: WebhookReceiver;
  let rp: RedisProxy;
  let browser: Browser;
  let url: string;
  let w: WatchedPage;

  beforeAll(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    rp = await startRedisProxyProcess({ UPSTREAM_URL: upstream.url, MODELS_FILE: writeModelsFile(), ADMIN_TOKEN });
    url = rp.proxy.url;
    browser = await launchBrowser();
    // The first admin comes from the CLI, as README says.
    w = await operatorPage(browser, url, ADMIN_TOKEN, OPERATOR);
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await receiver?.close();
    await upstream?.close();
  });
  afterEach(() => {
    expectNothingAmiss(w);
  });

  test('create an endpoint (secret shown once), see its deliveries, and redeliver one by hand', async () => {
    const { page } = w;
    await signIn(page, url, OPERATOR);
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks', exact: true }).click();
    await settledPage(page, 'Webhooks');
    await expect(page.getByText('No webhook endpoints yet.').count()).resolves.toBe(1);

    // A URL whose query is markup: accepted as a URL, and shown as text.
    const hookUrl = `${receiver.url}?from=${ATTACK}`;
    const form = page.getByRole('form', { name: 'New endpoint' });
    await form.getByLabel('URL').fill(hookUrl);
    await form.getByLabel('Events').fill('*');
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await review(w, 'admin-webhooks-secret');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const row = page.locator('table.list tbody tr').filter({ hasText: hookUrl });
    await row.waitFor();
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await page.reload();
    await settledPage(page, 'Webhooks');
    await row.waitFor();
    expect(await page.content()).not.toContain(secret); // shown that once only

    // The process learns the new endpoint on its next tick: accounts are made until one's account.created arrives.
    const first = await eventually(async () => {
      const made = await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/accounts', { name: ATTACK });
      return eventually(async () => {
        const got = receiver.received.find((r) => r.event.type === 'account.created' && r.event.data.account_id === made.id);
        expect(got).toBeDefined();
        return got!;
      }, 2_000);
    }, 30_000);

    await row.getByRole('button', { name: /^Deliveries/ }).click();
    const deliveries = page.locator('section', { has: page.getByRole('heading', { name: `Deliveries to ${hookUrl}` }) });
    const delivery = deliveries.locator('table.list tbody tr').filter({ hasText: first.event.id });
    await eventually(async () => {
      await deliveries.getByRole('button', { name: 'Refresh' }).click();
      await expect(delivery.innerText()).resolves.toMatch(/account\.created[\s\S]*delivered[\s\S]*1 \(HTTP 200\)/);
    }, 10_000);
    await review(w, 'admin-webhooks-deliveries');

    const before = receiver.received.filter((r) => r.event.id === first.event.id).length;
    await delivery.getByRole('button', { name: `Redeliver ${first.event.id}` }).click();
    const again = await eventually(async () => {
      const copies = receiver.received.filter((r) => r.event.id === first.event.id);
      expect(copies.length).toBe(before + 1);
      return copies[copies.length - 1];
    }, 15_000);
    expect(again.body).toBe(first.body);
    expect(verifyWebhook(again.body, again.signature, secret).valid).toBe(true);
    await eventually(async () => {
      await deliveries.getByRole('button', { name: 'Refresh' }).click();
      await expect(delivery.innerText()).resolves.toMatch(/delivered[\s\S]*2 \(HTTP 200\)/);
    }, 10_000);

    // Delete is in the endpoint's More menu and asks first; Cancel keeps the endpoint, confirming removes it from the
    // page and from the API.
    const deleteFromMenu = async () => {
      await row.getByRole('button', { name: `More actions for ${hookUrl}` }).click();
      await row.getByRole('menuitem', { name: 'Delete' }).click();
    };
    await deleteFromMenu();
    const confirm = page.getByRole('group', { name: `Confirm deleting the endpoint ${hookUrl}` });
    await confirm.waitFor();
    await review(w, 'admin-webhooks-delete-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect((await adminCall(url, ADMIN_TOKEN, 'GET', '/admin/webhooks')).data).toHaveLength(1);
    await deleteFromMenu();
    await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText('No webhook endpoints yet.').waitFor();
    // Its deliveries went with it: the section showing them is gone too.
    await expect(deliveries.count()).resolves.toBe(0);
    expect((await adminCall(url, ADMIN_TOKEN, 'GET', '/admin/webhooks')).data).toEqual([]);
  });
});
