/**
 * The one operator router behind either credential: with no ADMIN_TOKEN configured, an admin session still runs the
 * operator's routes (so the console's operator pages work), a member session gets 403 on every one of them, and
 * /admin itself stays off (a session cookie does not open it).
 */
import request from 'supertest';
import { chatBody, settled } from '../helpers/proxy';
import { accountWithPassword, Browser, startConsole, type ConsoleFixture } from '../helpers/console';

describe('the operator router without ADMIN_TOKEN', () => {
  let c: ConsoleFixture;
  let root: Browser;
  let member: Browser;
  let memberId: string;
  beforeAll(async () => {
    c = await startConsole('memory', { ADMIN_TOKEN: '' });
    await accountWithPassword(c.s.store, 'root@example.org', 'admin');
    memberId = (await accountWithPassword(c.s.store, 'ada@example.org')).id;
    root = new Browser(c.proxy.url);
    member = new Browser(c.proxy.url);
    expect((await root.login('root@example.org')).status).toBe(200);
    expect((await member.login('ada@example.org')).status).toBe(200);
  });
  afterAll(async () => {
    await c.close();
  });

  it('an admin session runs every operator page’s routes: accounts, grants, products, codes, usage', async () => {
    const accounts = await root.call('get', '/console/api/admin/accounts?search=ada');
    expect(accounts.status).toBe(200);
    expect(accounts.body.data.map((a: { id: string }) => a.id)).toEqual([memberId]);

    const granted = await root.call('post', `/console/api/admin/accounts/${memberId}/packages`, { tokens: 5000 });
    expect(granted.status).toBe(201);
    expect((await root.call('get', `/console/api/admin/accounts/${memberId}`)).body.balance).toBe(5000);

    const product = await root.call('post', '/console/api/admin/products', { id: 'starter', name: 'Starter', tokens: 100, price: 500 });
    expect(product.status).toBe(201);
    const codes = await root.call('post', '/console/api/admin/redemption-codes', { product_id: 'starter', count: 2 });
    expect(codes.status).toBe(201);
    expect(codes.body.data).toHaveLength(2);
    expect((await root.call('get', '/console/api/admin/redemption-codes')).body.data).toHaveLength(2);

    // A request on the member's key shows up in the operator's ledger.
    const key = (await member.call('post', '/console/api/keys', { name: 'k' })).body.key as string;
    await request(c.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key}`).send(chatBody()).expect(200);
    await settled(c.proxy);
    const usage = await root.call('get', `/console/api/admin/usage?account_id=${memberId}`);
    expect(usage.status).toBe(200);
    expect(usage.body.data).toHaveLength(1);

    const disabled = await root.call('patch', `/console/api/admin/accounts/${memberId}`, { status: 'disabled' });
    expect(disabled.body.status).toBe('disabled');
    expect((await root.call('patch', `/console/api/admin/accounts/${memberId}`, { status: 'active' })).body.status).toBe('active');
  });

  it('a member session gets 403 admin_required on the operator routes, and changes nothing', async () => {
    const before = (await member.call('get', '/console/api/me')).body.balance as number;
    for (const [method, path, body] of [
      ['get', '/console/api/admin/accounts'],
      ['get', `/console/api/admin/accounts/${memberId}`],
      ['post', `/console/api/admin/accounts/${memberId}/packages`, { tokens: 1_000_000 }],
      ['patch', `/console/api/admin/accounts/${memberId}`, { role: 'admin' }],
      ['get', '/console/api/admin/products'],
      ['post', '/console/api/admin/products', { name: 'Free', tokens: 1e9, price: 0 }],
      ['post', '/console/api/admin/redemption-codes', { tokens: 1e9 }],
      ['get', '/console/api/admin/usage'],
      ['get', '/console/api/admin/nothing-here'],
    ] as const) {
      const res = await member.call(method, path, body);
      expect([path, res.status, res.body.error?.code]).toEqual([path, 403, 'admin_required']);
    }
    const me = await member.call('get', '/console/api/me');
    expect(me.body.role).toBe('member');
    expect(me.body.balance).toBe(before);
    expect((await member.call('get', '/console/api/products')).body.data).toEqual([expect.objectContaining({ id: 'starter' })]);
  });

  it('/admin stays off without the token: 404, whatever cookie or bearer comes with the request', async () => {
    const withCookie = await request(c.proxy.url).get('/admin/accounts').set('cookie', root.cookie!);
    expect(withCookie.status).toBe(404);
    const withBearer = await request(c.proxy.url).get('/admin/accounts').set('authorization', 'Bearer console-test-admin-token');
    expect(withBearer.status).toBe(404);
  });
});
