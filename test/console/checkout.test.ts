/**
 * The product center with Stripe Checkout configured, in headless Chromium: registration closed shows the API's own
 * refusal; Buy opens the Checkout page Stripe returned (stood in locally), which sends the buyer back to the result
 * page; once Stripe's webhook arrives, the tokens are there. The only request that leaves the proxy is that navigation.
 */
import type { Browser } from 'playwright-core';
import Stripe from 'stripe';
import { launchBrowser, openPage, type WatchedPage } from '../helpers/browser';
import { adminCall, review, settledPage, signIn } from '../helpers/console-browser';
import { writeModelsFile } from '../helpers/models-file';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { startStripeStandIn, type StripeStandIn } from '../helpers/stripe-stand-in';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'console-checkout-admin-token';
const WEBHOOK_SECRET = 'whsec_console_checkout_test';
const BUYER = { email: 'buyer@example.org', password: 'buyer passphrase' };

describe('buying through Stripe Checkout in Chromium', () => {
  let standIn: StripeStandIn;
  let rp: RedisProxy;
  let browser: Browser;
  let url: string;
  let w: WatchedPage;

  beforeAll(async () => {
    standIn = await startStripeStandIn();
    rp = await startRedisProxyProcess({
      MODELS_FILE: writeModelsFile(),
      ADMIN_TOKEN,
      STRIPE_SECRET_KEY: 'sk_test_console',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: standIn.url,
    });
    url = rp.proxy.url;
    await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/accounts', BUYER);
    await adminCall(url, ADMIN_TOKEN, 'POST', '/admin/products', {
      id: 'starter',
      name: 'Starter',
      tokens: 50_000,
      valid_days: 30,
      price: 500,
    });
    browser = await launchBrowser();
    w = await openPage(browser, url);
  });
  afterAll(async () => {
    await browser?.close();
    await rp?.close();
    await standIn?.close();
  });

  test('sign-up, when registration is closed, shows the API’s refusal', async () => {
    const { page } = w;
    await page.goto(`${url}/console/signup`);
    await settledPage(page, 'Create an account');
    await page.getByLabel('Email').fill('newcomer@example.org');
    await page.getByLabel('Password').fill('a long passphrase');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('alert').filter({ hasText: 'Registration is closed: ask the operator for an account.' }).waitFor();
    expect(w.outside).toEqual([]);
  });

  test('Buy goes to Checkout, which returns to the result page; the webhook brings the tokens', async () => {
    const { page } = w;
    await signIn(page, url, BUYER);
    await page.getByRole('link', { name: 'Buy tokens' }).click();
    await settledPage(page, 'Buy tokens');
    // Stripe's hosted page, stood in for: it sends the buyer straight back, as after paying.
    await page.route('https://checkout.stripe.test/**', (route) =>
      route.fulfill({ status: 303, headers: { location: `${url}/console/?checkout=success` } }),
    );
    await page.getByRole('button', { name: 'Buy Starter' }).click();
    await settledPage(page, 'Thank you for your purchase');
    expect(w.outside).toEqual(['https://checkout.stripe.test/pay/cs_test_1']);
    await expect(page.getByText('Balance now: 0 tokens').count()).resolves.toBe(1);
    await review(w, 'checkout-success');

    // Stripe's webhook, carrying the console's Checkout Session (its metadata, amount and currency), now paid.
    const session = standIn.created[0];
    const payload = JSON.stringify({
      id: 'evt_console_1',
      object: 'event',
      type: 'checkout.session.completed',
      data: { object: { ...session, payment_status: 'paid' } },
    });
    const signature = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const delivered = await fetch(`${url}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      body: payload,
    });
    expect(delivered.status).toBe(200);

    await page.getByRole('button', { name: 'Check again' }).click();
    await page.getByText('Balance now: 50,000 tokens').waitFor();
    expect(w.cspViolations).toEqual([]);
  });

  test('a cancelled payment says nothing was charged', async () => {
    await w.page.goto(`${url}/console/?checkout=cancelled`);
    await settledPage(w.page, 'Payment cancelled');
    await expect(w.page.getByText('Nothing was charged.').count()).resolves.toBe(1);
  });
});
