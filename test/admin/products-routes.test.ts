/** The operator's product center: products, redemption codes shown once, listed without the code. */
import { accountWithPassword, admin, ADMIN_TOKEN, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import request from 'supertest';

describe('product center admin', () => {
  let c: ConsoleFixture;
  beforeEach(async () => {
    c = await startConsole('redis');
  });
  afterEach(async () => {
    await c.close();
  });

  it('creates, lists and edits products; account holders see only the active ones, without logging in', async () => {
    const op = admin(c.proxy.url);
    const created = await op.post('/admin/products', { id: 'starter', name: 'Starter', tokens: 100_000, valid_days: 30, price: 500 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'starter',
      name: 'Starter',
      tokens: 100_000,
      valid_days: 30,
      price: 500,
      currency: 'usd',
      active: true,
    });
    expect((await op.post('/admin/products', { id: 'starter', name: 'Again', tokens: 1, price: 1 })).status).toBe(400);
    await op.post('/admin/products', { id: 'pro', name: 'Pro', tokens: 1_000_000, price: 4000 });
    expect((await op.get('/admin/products')).body.data.map((p: { id: string }) => p.id)).toEqual(['starter', 'pro']);

    const patched = await op.patch('/admin/products/pro', { active: false, price: 3500 });
    expect(patched.body).toMatchObject({ id: 'pro', active: false, price: 3500, tokens: 1_000_000 });
    expect((await op.patch('/admin/products/ghost', { active: false })).status).toBe(404);

    const publicList = await new Browser(c.proxy.url).call('get', '/console/api/products');
    expect(publicList.status).toBe(200);
    expect(publicList.body.data.map((p: { id: string }) => p.id)).toEqual(['starter']);
    // No STRIPE_SECRET_KEY here: the list says the products cannot be bought by card.
    expect(publicList.body.checkout).toBe(false);
  });

  it('refuses bad products with a 400 naming the field', async () => {
    const op = admin(c.proxy.url);
    for (const [body, param] of [
      [{ name: 'x', tokens: 0, price: 1 }, 'tokens'],
      [{ name: 'x', tokens: 1, price: -1 }, 'price'],
      [{ name: 'x', tokens: 1, price: 1, currency: 'dollars' }, 'currency'],
      [{ id: 'Bad Id', name: 'x', tokens: 1, price: 1 }, 'id'],
      [{ name: 'x', tokens: 1, price: 1, colour: 'red' }, 'colour'],
    ] as const) {
      const res = await op.post('/admin/products', body);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
  });

  it('shows each code once at creation; the listing shows status and redeemer, never the code', async () => {
    const op = admin(c.proxy.url);
    await op.post('/admin/products', { id: 'starter', name: 'Starter', tokens: 100, valid_days: 7, price: 500 });
    const made = await op.post('/admin/redemption-codes', {
      product_id: 'starter',
      count: 3,
      expires_at: Math.floor(Date.now() / 1000) + 3600,
    });
    expect(made.status).toBe(201);
    expect(made.body.data).toHaveLength(3);
    for (const code of made.body.data) {
      expect(code.code).toMatch(/^TM(-[0-9A-Z]{4}){6}$/);
      expect(code).toMatchObject({ product_id: 'starter', tokens: 100, valid_days: 7, status: 'active', redeemed_by: null });
    }
    expect(new Set(made.body.data.map((c: { code: string }) => c.code)).size).toBe(3);
    const plain = await op.post('/admin/redemption-codes', { tokens: 5000 });
    expect(plain.body.data[0]).toMatchObject({ product_id: null, tokens: 5000, valid_days: null, expires_at: null });

    const listed = await op.get('/admin/redemption-codes');
    expect(listed.body.data).toHaveLength(4);
    const text = JSON.stringify(listed.body);
    for (const code of [...made.body.data, ...plain.body.data]) expect(text).not.toContain(code.code.slice(3));
    expect(listed.body.data[0]).not.toHaveProperty('code');
    if (c.commerce.redis) {
      const keys = await c.commerce.redis.keys(`${c.commerce.prefix}*`);
      const dumps = await Promise.all(
        keys.map(async (k) => ((await c.commerce.redis!.type(k)) === 'hash' ? JSON.stringify(await c.commerce.redis!.hgetall(k)) : '')),
      );
      expect(`${keys.join(' ')} ${dumps.join(' ')}`).not.toContain(made.body.data[0].code.slice(3, 12));
    }
  });

  it('lists who redeemed a code by email as well as by account id', async () => {
    const op = admin(c.proxy.url);
    const made = (await op.post('/admin/redemption-codes', { tokens: 100, count: 3 })).body.data;
    const [ada, bob] = [await accountWithPassword(c.s.store, 'ada@example.org'), await accountWithPassword(c.s.store, 'bob@example.org')];
    for (const [who, code] of [
      [ada, made[0].code],
      [bob, made[1].code],
    ] as const) {
      const browser = new Browser(c.proxy.url);
      expect((await browser.login(who.email!)).status).toBe(200);
      expect((await browser.call('post', '/console/api/redeem', { code })).status).toBe(201);
    }
    const listed = (await op.get('/admin/redemption-codes')).body.data as {
      id: string;
      redeemed_by: string | null;
      redeemed_by_email: string | null;
    }[];
    const byId = new Map(listed.map((c) => [c.id, c]));
    expect(byId.get(made[0].id)).toMatchObject({ redeemed_by: ada.id, redeemed_by_email: 'ada@example.org' });
    expect(byId.get(made[1].id)).toMatchObject({ redeemed_by: bob.id, redeemed_by_email: 'bob@example.org' });
    expect(byId.get(made[2].id)).toMatchObject({ redeemed_by: null, redeemed_by_email: null });
  });

  it('refuses codes for an unknown product, without a product or amount, or with both', async () => {
    const op = admin(c.proxy.url);
    expect((await op.post('/admin/redemption-codes', { product_id: 'ghost' })).status).toBe(404);
    expect((await op.post('/admin/redemption-codes', { count: 2 })).body.error.param).toBe('product_id');
    await op.post('/admin/products', { id: 'starter', name: 'Starter', tokens: 100, price: 500 });
    expect((await op.post('/admin/redemption-codes', { product_id: 'starter', tokens: 5 })).status).toBe(400);
    expect((await op.post('/admin/redemption-codes', { tokens: 5, count: 1001 })).body.error.param).toBe('count');
  });

  it('needs the admin token', async () => {
    expect((await request(c.proxy.url).get('/admin/products')).status).toBe(401);
    expect((await request(c.proxy.url).get('/admin/redemption-codes').set('authorization', `Bearer ${ADMIN_TOKEN}x`)).status).toBe(401);
  });
});
