/** The admin API's accounts routes against a real redis-server: create, list, show, update, grant, keys, usage. */
import request from 'supertest';
import { verifyPassword } from '../../src/accounts/password';
import { chatBody } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

const ADMIN = 'admin-token-0123456789';

describe('admin API: accounts (redis store)', () => {
  const t = proxyFixture('redis', { env: { ADMIN_TOKEN: ADMIN } });
  const as = (token: string) => ({
    get: (path: string) => request(t.proxy.url).get(path).set('authorization', `Bearer ${token}`),
    post: (path: string, body?: object) => request(t.proxy.url).post(path).set('authorization', `Bearer ${token}`).send(body),
    patch: (path: string, body?: object) => request(t.proxy.url).patch(path).set('authorization', `Bearer ${token}`).send(body),
  });
  const admin = () => as(ADMIN);
  const complete = (secret: string) =>
    request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${secret}`)
      .send(chatBody({ max_tokens: 5 }));

  it('refuses every accounts route without the admin token (an account holder cannot manage accounts)', async () => {
    for (const [method, path] of [
      ['get', '/admin/accounts'],
      ['post', '/admin/accounts'],
      ['get', '/admin/accounts/acc_x'],
      ['patch', '/admin/accounts/acc_x'],
      ['post', '/admin/accounts/acc_x/packages'],
      ['post', '/admin/accounts/acc_x/keys'],
    ] as const) {
      expect((await as('wrong-token-0123456789')[method](path)).status).toBe(401);
    }
    expect(await t.s.store.listAccounts({ limit: 10 })).toHaveLength(0);
  });

  it('creates an account with a normalised email and a hashed password, never shown or stored in clear', async () => {
    const res = await admin().post('/admin/accounts', {
      email: ' Ada@Example.COM ',
      name: 'Ada',
      password: 'correct horse battery',
      role: 'admin',
      tokens: 1000,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acc_/),
      email: 'ada@example.com',
      name: 'Ada',
      role: 'admin',
      status: 'active',
      has_password: true,
      created: expect.any(Number),
      limits: null,
      budget: null,
      balance: 1000,
    });
    const stored = await t.s.store.findAccountByEmail('ada@example.com');
    expect(stored!.passwordHash).toMatch(/^scrypt\$/);
    expect(await verifyPassword('correct horse battery', stored!.passwordHash!)).toBe(true);
    const dump = JSON.stringify(await t.s.redis!.hgetall(`${t.s.prefix}{${res.body.id}}:a`));
    expect(dump).not.toContain('correct horse');
    expect(JSON.stringify((await admin().get(`/admin/accounts/${res.body.id}`)).body)).not.toContain('scrypt');

    const again = await admin().post('/admin/accounts', { email: 'ADA@example.com', password: 'another password' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'email_taken', param: 'email' });
  });

  it.each([
    [{ email: 'not-an-email' }, 'email'],
    [{ password: 'short' }, 'password'],
    [{ role: 'owner' }, 'role'],
    [{ status: 'gone' }, 'status'],
    [{ tokens: 0 }, 'tokens'],
    [{ secret: 1 }, null],
  ])('refuses a bad account %j with 400 naming the field, creating nothing', async (body, param) => {
    const res = await admin().post('/admin/accounts', body);
    expect(res.status).toBe(400);
    if (param) expect(res.body.error.param).toBe(param);
    expect(await t.s.store.listAccounts({ limit: 10 })).toHaveLength(0);
  });

  it('lists and searches accounts page by page', async () => {
    for (const name of ['Ada', 'Grace', 'Linus'])
      await admin().post('/admin/accounts', { name, email: `${name.toLowerCase()}@example.com` });
    const first = await admin().get('/admin/accounts?limit=2');
    expect(first.body.data.map((a: { name: string }) => a.name)).toEqual(['Ada', 'Grace']);
    expect(first.body.has_more).toBe(true);
    const next = await admin().get(`/admin/accounts?limit=2&after=${first.body.data[1].id}`);
    expect(next.body).toMatchObject({ data: [{ name: 'Linus' }], has_more: false });
    expect((await admin().get('/admin/accounts?search=GRACE')).body.data.map((a: { name: string }) => a.name)).toEqual(['Grace']);
    expect((await admin().get('/admin/accounts?limit=0')).status).toBe(400);
  });

  it('lists each account with its balance, reserved tokens and debt, so the list needs no request per account', async () => {
    const ada = (await admin().post('/admin/accounts', { name: 'Ada', tokens: 500 })).body;
    const grace = (await admin().post('/admin/accounts', { name: 'Grace' })).body;
    await admin().post(`/admin/accounts/${grace.id}/packages`, { tokens: 1200 });
    const list = (await admin().get('/admin/accounts')).body.data;
    expect(list).toEqual([
      expect.objectContaining({ id: ada.id, balance: 500, reserved: 0, debt: 0 }),
      expect.objectContaining({ id: grace.id, balance: 1200, reserved: 0, debt: 0 }),
    ]);
  });

  it('names each usage record’s account by email and key by name, so the operator reads people, not ids', async () => {
    const ada = (await admin().post('/admin/accounts', { email: 'ada@example.org', name: 'Ada', tokens: 10_000 })).body;
    const laptop = (await admin().post(`/admin/accounts/${ada.id}/keys`, { name: 'laptop' })).body;
    // An API-only account (no email) and its key.
    const bare = (await admin().post('/admin/keys', { name: 'ci', tokens: 10_000 })).body;
    await complete(laptop.key).expect(200);
    await complete(laptop.key).expect(200);
    await complete(bare.key).expect(200);
    const all = (await admin().get('/admin/usage')).body.data as {
      account_id: string;
      account_email: string | null;
      key_name: string | null;
    }[];
    expect(all).toHaveLength(3);
    expect(all.filter((r) => r.account_id === ada.id)).toEqual([
      expect.objectContaining({ account_email: 'ada@example.org', key_name: 'laptop' }),
      expect.objectContaining({ account_email: 'ada@example.org', key_name: 'laptop' }),
    ]);
    expect(all.filter((r) => r.account_id === bare.account_id)).toEqual([expect.objectContaining({ account_email: null, key_name: 'ci' })]);
  });

  it('grants packages to an account whose keys, each within its cap, all spend them', async () => {
    const account = (await admin().post('/admin/accounts', { name: 'team' })).body;
    expect((await admin().post(`/admin/accounts/${account.id}/packages`, { tokens: 10_000 })).status).toBe(201);
    const capped = await admin().post(`/admin/accounts/${account.id}/keys`, { name: 'ci', limit_tokens: 300 });
    expect(capped.status).toBe(201);
    expect(capped.body).toMatchObject({ account_id: account.id, limit_tokens: 300, balance: 300, key: expect.stringMatching(/^sk-/) });
    const open = (await admin().post(`/admin/accounts/${account.id}/keys`, { name: 'dev' })).body;
    expect(open.balance).toBe(10_000);
    await complete(capped.body.key).expect(200);
    await complete(open.key).expect(200);

    const shown = (await admin().get(`/admin/accounts/${account.id}`)).body;
    expect(shown).toMatchObject({ id: account.id, reserved: 0, debt: 0, usage: { requests: 2 } });
    expect(shown.balance).toBe(10_000 - shown.usage.charged_tokens);
    expect(shown.keys.map((k: { name: string }) => k.name)).toEqual(['ci', 'dev']);
    const key = (await admin().get(`/admin/keys/${capped.body.id}`)).body;
    expect(key).toMatchObject({ account_id: account.id, limit_tokens: 300, status: 'active' });
    expect(key.balance).toBe(300 - key.spent_tokens);
    expect(key.last_used).toEqual(expect.any(Number));

    const usage = (await admin().get(`/admin/usage?account_id=${account.id}`)).body.data;
    expect(usage.map((r: { key_id: string }) => r.key_id)).toEqual([capped.body.id, open.id]);
    expect((await admin().get(`/admin/usage?account_id=${account.id}&after=${usage[0].cursor}`)).body.data).toHaveLength(1);
    expect((await admin().get(`/admin/accounts/${account.id}/keys`)).body.data).toHaveLength(2);

    expect((await admin().post('/admin/accounts/acc_missing/packages', { tokens: 1 })).status).toBe(404);
    expect((await admin().post('/admin/accounts/acc_missing/keys', {})).status).toBe(404);
    expect(await t.s.store.findKeyId('x')).toBeUndefined();
  });

  it('refuses a grant that would take a balance past 2^53 with a clear 400 naming tokens, crediting nothing', async () => {
    const account = (await admin().post('/admin/accounts', { name: 'whale', tokens: 1e15 })).body;
    for (let i = 0; i < 8; i++) await admin().post(`/admin/accounts/${account.id}/packages`, { tokens: 1e15 }).expect(201);
    for (const route of [`/admin/accounts/${account.id}/packages`, `/admin/accounts/${account.id}/keys`]) {
      const refused = await admin().post(route, { tokens: 1e13 });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request_error', param: 'tokens' });
      expect(refused.body.error.message).toContain('9007199254740991');
    }
    // The key made before its grant was refused is not left usable.
    expect((await admin().get(`/admin/accounts/${account.id}/keys`)).body.data).toEqual([expect.objectContaining({ status: 'revoked' })]);
    const tooBig = await admin().post(`/admin/accounts/${account.id}/packages`, { tokens: 1e15 + 1 });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.param).toBe('tokens');
    expect((await admin().get(`/admin/accounts/${account.id}`)).body.balance).toBe(9e15);
  });

  it('disabling an account stops all its keys at once; enabling serves them again', async () => {
    const account = (await admin().post('/admin/accounts', { name: 'team', tokens: 10_000 })).body;
    const keys = [];
    for (let i = 0; i < 2; i++) keys.push((await admin().post(`/admin/accounts/${account.id}/keys`, {})).body.key as string);
    await complete(keys[0]).expect(200);
    const disabled = await admin().patch(`/admin/accounts/${account.id}`, { status: 'disabled' });
    expect(disabled.body).toMatchObject({ status: 'disabled' });
    for (const key of keys) {
      const refused = await complete(key);
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toContain('disabled');
    }
    await admin().patch(`/admin/accounts/${account.id}`, { status: 'active' }).expect(200);
    await complete(keys[1]).expect(200);
  });

  it('renames, sets the role and a new password, and never logs the password', async () => {
    const account = (await admin().post('/admin/accounts', { email: 'ops@example.com' })).body;
    expect(account.has_password).toBe(false);
    const res = await admin().patch(`/admin/accounts/${account.id}`, { name: 'Ops', role: 'admin', password: 'a new long password' });
    expect(res.body).toMatchObject({ name: 'Ops', role: 'admin', has_password: true, email: 'ops@example.com' });
    const stored = await t.s.store.findAccountByEmail('ops@example.com');
    expect(await verifyPassword('a new long password', stored!.passwordHash!)).toBe(true);
    expect(t.proxy.logs.join('')).toContain('account updated');
    expect(t.proxy.logs.join('')).not.toContain('a new long password');
    expect((await admin().patch(`/admin/accounts/${account.id}`, { password: 'short' })).status).toBe(400);
    expect((await admin().patch('/admin/accounts/acc_missing', { name: 'x' })).status).toBe(404);
  });
});
