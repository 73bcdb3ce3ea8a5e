/**
 * Stripe Checkout against a local stand-in for Stripe's API, and webhooks signed with the stripe package's own test
 * helper: a payment is credited once however often Stripe delivers it; a forged delivery credits nothing, and neither
 * does a genuinely signed one for a session this proxy did not sell, or not at that price.
 */
import request from 'supertest';
import Stripe from 'stripe';
import { accountWithPassword, admin, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { storeKinds } from '../helpers/stores';
import { startStripeStandIn, type StandInSession, type StripeStandIn } from '../helpers/stripe-stand-in';

const WEBHOOK_SECRET = 'whsec_test_secret_for_tokenmeter';
const stripe = new Stripe('sk_test_unused');

function completedEvent(over: { sessionId?: string; accountId: string; tokens?: string; paid?: boolean; type?: string }) {
  return JSON.stringify({
    id: `evt_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type: over.type ?? 'checkout.session.completed',
    data: {
      object: {
        id: over.sessionId ?? 'cs_test_paid',
        object: 'checkout.session',
        payment_status: over.paid === false ? 'unpaid' : 'paid',
        amount_total: 500,
        currency: 'usd',
        metadata: { account_id: over.accountId, product_id: 'starter', tokens: over.tokens ?? '50000', valid_days: '30' },
      },
    },
  });
}

const deliver = (url: string, payload: string, secret = WEBHOOK_SECRET) =>
  request(url)
    .post('/webhooks/stripe')
    .set('content-type', 'application/json')
    .set('stripe-signature', stripe.webhooks.generateTestHeaderString({ payload, secret }))
    .send(payload);

describe('Stripe Checkout', () => {
  let c: ConsoleFixture;
  let standIn: StripeStandIn;
  beforeAll(async () => {
    standIn = await startStripeStandIn();
    c = await startConsole('redis', {
      STRIPE_SECRET_KEY: 'sk_test_tokenmeter',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: standIn.url,
    });
    await admin(c.proxy.url).post('/admin/products', {
      id: 'starter',
      name: 'Starter',
      tokens: 50_000,
      valid_days: 30,
      price: 500,
      currency: 'USD',
    });
    await admin(c.proxy.url).post('/admin/products', { id: 'retired', name: 'Old', tokens: 1, price: 1, active: false });
  });
  afterAll(async () => {
    await c.close();
    await standIn.close();
  });

  it('says in the product list that Checkout is configured', async () => {
    const res = await new Browser(c.proxy.url).call('get', '/console/api/products');
    expect(res.body).toMatchObject({ data: [{ id: 'starter' }], checkout: true });
  });

  it('starts a Checkout Session for an active product, with the account and product in its metadata', async () => {
    const ada = await accountWithPassword(c.s.store, 'ada@example.org');
    const b = new Browser(c.proxy.url);
    await b.login('ada@example.org');
    const res = await b.call('post', '/console/api/checkout', { product_id: 'starter' });
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/^https:\/\/checkout\.stripe\.test\/pay\/cs_test_/);
    const form = standIn.sessions[standIn.sessions.length - 1];
    expect(form.get('mode')).toBe('payment');
    expect(form.get('metadata[account_id]')).toBe(ada.id);
    expect(form.get('metadata[product_id]')).toBe('starter');
    expect(form.get('metadata[tokens]')).toBe('50000');
    expect(form.get('line_items[0][price_data][unit_amount]')).toBe('500');
    expect(form.get('line_items[0][price_data][currency]')).toBe('usd');
    expect(form.get('success_url')).toBe(`${c.proxy.url}/console/?checkout=success`);

    expect((await b.call('post', '/console/api/checkout', { product_id: 'retired' })).status).toBe(404);
    expect((await b.call('post', '/console/api/checkout', { product_id: 'nope' })).status).toBe(404);
    expect((await new Browser(c.proxy.url).call('post', '/console/api/checkout', { product_id: 'starter' })).status).toBe(401);
  });

  it('credits a paid checkout once, however often Stripe delivers the event', async () => {
    const bob = await accountWithPassword(c.s.store, 'bob@example.org');
    const b = new Browser(c.proxy.url);
    await b.login('bob@example.org');
    expect((await b.call('post', '/console/api/checkout', { product_id: 'starter' })).status).toBe(200);
    const sessionId = standIn.created[standIn.created.length - 1].id;
    const payload = completedEvent({ sessionId, accountId: bob.id });
    for (let i = 0; i < 3; i++) {
      const res = await deliver(c.proxy.url, payload);
      expect(res.status).toBe(200);
    }
    // The same session's async-payment event is the same purchase: still one credit.
    expect(
      (await deliver(c.proxy.url, completedEvent({ sessionId, accountId: bob.id, type: 'checkout.session.async_payment_succeeded' })))
        .status,
    ).toBe(200);
    const state = (await c.s.store.getAccount(bob.id))!;
    expect(state.balance).toBe(50_000);
    expect(state.packages).toHaveLength(1);
    expect(state.packages[0].expiresAt).toBeGreaterThan(Date.now() / 1000 + 29 * 86_400);
  });

  it('a forged delivery credits nothing: a wrong secret, no signature, or a body changed after signing get 400', async () => {
    const eve = await accountWithPassword(c.s.store, 'eve@example.org');
    const payload = completedEvent({ sessionId: 'cs_test_forged', accountId: eve.id });
    const wrongSecret = await deliver(c.proxy.url, payload, 'whsec_guessed');
    expect(wrongSecret.status).toBe(400);
    expect(wrongSecret.body.error.code).toBe('invalid_signature');
    expect((await request(c.proxy.url).post('/webhooks/stripe').set('content-type', 'application/json').send(payload)).status).toBe(400);
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const tampered = payload.replace('"50000"', '"50000000"');
    const res = await request(c.proxy.url)
      .post('/webhooks/stripe')
      .set('content-type', 'application/json')
      .set('stripe-signature', signature)
      .send(tampered);
    expect(res.status).toBe(400);
    expect((await c.s.store.getAccount(eve.id))!.balance).toBe(0);
  });

  it('ignores other events and unpaid sessions with 200, crediting nothing', async () => {
    const cy = await accountWithPassword(c.s.store, 'cy@example.org');
    expect((await deliver(c.proxy.url, completedEvent({ sessionId: 'cs_test_unpaid', accountId: cy.id, paid: false }))).body).toEqual({
      received: true,
      ignored: true,
    });
    expect(
      (await deliver(c.proxy.url, completedEvent({ sessionId: 'cs_test_other', accountId: cy.id, type: 'customer.created' }))).status,
    ).toBe(200);
    expect((await c.s.store.getAccount(cy.id))!.balance).toBe(0);
  });
});

/** The event Stripe sends when this session is paid: the session as Stripe answered it, with `over` changed. */
function paidEvent(session: StandInSession, over: Partial<StandInSession> = {}): string {
  const object = { ...session, payment_status: 'paid', ...over };
  return JSON.stringify({
    id: `evt_${Math.random().toString(36).slice(2)}`,
    object: 'event',
    type: 'checkout.session.completed',
    data: { object },
  });
}

describe.each(storeKinds)('a signed webhook credits only what this proxy sold (%s store)', (kind) => {
  let c: ConsoleFixture;
  let standIn: StripeStandIn;
  let buyers = 0;
  beforeAll(async () => {
    standIn = await startStripeStandIn();
    c = await startConsole(kind, {
      STRIPE_SECRET_KEY: 'sk_test_tokenmeter',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_URL: standIn.url,
    });
    // 1000 tokens for 16 days: what a lax parser would also read in "1e3" and "0x10".
    await admin(c.proxy.url).post('/admin/products', {
      id: 'kilo',
      name: 'Kilo',
      tokens: 1000,
      valid_days: 16,
      price: 100,
      currency: 'eur',
    });
  });
  afterAll(async () => {
    await c.close();
    await standIn.close();
  });

  /** A new buyer's Checkout Session for the kilo product, as the stand-in created it; and the buyer's account id. */
  async function adaCheckout(): Promise<{ session: StandInSession; accountId: string }> {
    const email = `ada${++buyers}@example.org`;
    const ada = await accountWithPassword(c.s.store, email);
    const b = new Browser(c.proxy.url);
    await b.login(email);
    expect((await b.call('post', '/console/api/checkout', { product_id: 'kilo' })).status).toBe(200);
    return { session: standIn.created[standIn.created.length - 1], accountId: ada.id };
  }

  const balance = async (accountId: string) => (await c.s.store.getAccount(accountId))!.balance;

  it('a signed session this proxy did not create credits nothing', async () => {
    const eve = await accountWithPassword(c.s.store, 'eve@example.org');
    // Made elsewhere on the same Stripe account (a payment link, another app, the dashboard), metadata and all.
    const foreign: StandInSession = {
      id: 'cs_live_made_elsewhere',
      object: 'checkout.session',
      url: 'https://checkout.stripe.test/pay/x',
      payment_status: 'paid',
      amount_total: 100,
      currency: 'eur',
      metadata: { account_id: eve.id, product_id: 'kilo', tokens: '1000', valid_days: '16' },
    };
    const res = await deliver(c.proxy.url, paidEvent(foreign));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, ignored: true });
    expect(await balance(eve.id)).toBe(0);
    expect(c.proxy.logs.join('')).toContain('stripe checkout this proxy did not create');
  });

  it('a session paid at another price or in another currency credits nothing', async () => {
    const { session, accountId } = await adaCheckout();
    expect(session.amount_total).toBe(100);
    for (const over of [{ amount_total: 1 }, { currency: 'jpy' }, { amount_total: 0 }]) {
      expect((await deliver(c.proxy.url, paidEvent(session, over))).body).toEqual({ received: true, ignored: true });
    }
    expect(await balance(accountId)).toBe(0);
    // The very session, paid at its price, credits what was sold.
    expect((await deliver(c.proxy.url, paidEvent(session))).body).toEqual({ received: true });
    expect(await balance(accountId)).toBe(1000);
  });

  it.each([
    ['tokens in exponent form', { tokens: '1e3' }],
    ['tokens with a fraction', { tokens: '1000.0' }],
    ['tokens with a sign', { tokens: '+1000' }],
    ['tokens padded', { tokens: ' 1000' }],
    ['more tokens than were sold', { tokens: '1000000' }],
    ['valid_days in hex', { valid_days: '0x10' }],
    ['negative valid_days', { valid_days: '-16' }],
    ['no expiry', { valid_days: '' }],
    ['another account', { account_id: 'acc_attacker' }],
    ['another product', { product_id: 'pro' }],
  ])('metadata changed after the sale (%s) credits nothing', async (_what, changed) => {
    const { session, accountId } = await adaCheckout();
    const res = await deliver(c.proxy.url, paidEvent(session, { metadata: { ...session.metadata, ...changed } }));
    expect(res.body).toEqual({ received: true, ignored: true });
    expect(await balance(accountId)).toBe(0);
    expect(c.proxy.logs.join('')).toContain('stripe checkout is not what was sold');
  });
});

describe('without the Stripe variables', () => {
  it('answers 404 on both routes', async () => {
    const c = await startConsole('memory');
    try {
      await accountWithPassword(c.s.store, 'ada@example.org');
      const b = new Browser(c.proxy.url);
      await b.login('ada@example.org');
      expect((await b.call('post', '/console/api/checkout', { product_id: 'starter' })).status).toBe(404);
      expect((await request(c.proxy.url).post('/webhooks/stripe').send('{}')).status).toBe(404);
    } finally {
      await c.close();
    }
  });
});
