/**
 * Setting budgets: the operator on accounts and keys (admin API), the account holder on their own keys (console API),
 * each shown with what the current period has spent; bad budgets refused with a 400 naming the field, charging nothing.
 */
import request from 'supertest';
import { accountWithPassword, ADMIN_TOKEN, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { chatBody, settled } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';

describe('budgets through the admin and console APIs', () => {
  let c: ConsoleFixture;
  let ada: Browser;
  let adaId: string;
  beforeAll(async () => {
    c = await startConsole('redis');
    const account = await accountWithPassword(c.s.store, 'ada@example.org');
    adaId = account.id;
    await c.s.store.grantPackage(account.id, { tokens: 100_000, expiresAt: null });
    ada = new Browser(c.proxy.url);
    await ada.login('ada@example.org');
  });
  afterAll(async () => {
    await c.close();
  });

  const admin = (method: 'get' | 'post' | 'patch', path: string, body?: object) => {
    const r = request(c.proxy.url)[method](path).set('authorization', `Bearer ${ADMIN_TOKEN}`);
    return body ? r.send(body) : r;
  };
  const post = (secret: string) =>
    request(c.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(chatBody());
  const tomorrow = () => {
    const d = new Date();
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) / 1000;
  };

  it('the operator sets a key budget at creation and later; the key shows what the period spent', async () => {
    const before = tomorrow();
    const created = await admin('post', '/admin/keys', { tokens: 10_000, budget: { tokens: 500, period: 'day' } });
    expect(created.status).toBe(201);
    expect(created.body.budget).toEqual({ tokens: 500, period: 'day', spent: 0, reserved: 0, resets_at: expect.any(Number) });
    // The next UTC midnight (the one after the request, should it have run across one).
    expect([before, tomorrow()]).toContain(created.body.budget.resets_at);
    await post(created.body.key).expect(200);
    await settled(c.proxy);
    const shown = await admin('get', `/admin/keys/${created.body.id}`);
    expect(shown.body.budget.spent).toBe(shown.body.usage.charged_tokens);
    expect(shown.body.budget.spent).toBeGreaterThan(0);
    const patched = await admin('patch', `/admin/keys/${created.body.id}`, { budget: { tokens: 1, period: 'week' } });
    expect(patched.status).toBe(200);
    expect(patched.body.budget).toMatchObject({ tokens: 1, period: 'week' });
    expect(patched.body.limits).toBeNull();
    const refused = await post(created.body.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('budget_exceeded');
    await admin('patch', `/admin/keys/${created.body.id}`, { budget: null }).expect(200);
    await post(created.body.key).expect(200);
  });

  it("the operator sets an account's budget at creation and later, shared by its keys and shown on the account", async () => {
    const created = await admin('post', '/admin/accounts', { tokens: 10_000, budget: { tokens: 1, period: 'month' } });
    expect(created.status).toBe(201);
    expect(created.body.budget).toMatchObject({ tokens: 1, period: 'month', spent: 0 });
    const key = await admin('post', `/admin/accounts/${created.body.id}/keys`, {});
    expect((await post(key.body.key)).body.error.code).toBe('budget_exceeded');
    const patched = await admin('patch', `/admin/accounts/${created.body.id}`, { budget: { tokens: 100_000, period: 'day' } });
    expect(patched.body.budget).toMatchObject({ tokens: 100_000, period: 'day' });
    await post(key.body.key).expect(200);
    await settled(c.proxy);
    const shown = await admin('get', `/admin/accounts/${created.body.id}`);
    expect(shown.body.budget.spent).toBe(shown.body.usage.charged_tokens);
    const listed = await admin('get', '/admin/accounts?limit=1000');
    expect(listed.body.data.find((a: { id: string }) => a.id === created.body.id).budget.tokens).toBe(100_000);
  });

  it.each([
    [{ budget: { tokens: 0, period: 'day' } }, 'budget.tokens'],
    [{ budget: { tokens: 10, period: 'year' } }, 'budget.period'],
    [{ budget: { tokens: 10 } }, 'budget.period'],
    [{ budget: { tokens: 10, period: 'day', rollover: true } }, 'budget.rollover'],
  ])('refuses a bad budget %j with a 400 naming %s, everywhere it is taken', async (body, param) => {
    const key = await keyWithTokens(c.s.store, 100, { accountId: adaId });
    const answers = [
      await admin('post', '/admin/keys', { tokens: 10, ...body }),
      await admin('patch', `/admin/keys/${key.id}`, body),
      await admin('post', '/admin/accounts', body),
      await admin('patch', `/admin/accounts/${adaId}`, body),
      await ada.call('post', '/console/api/keys', { name: 'x', ...body }),
      await ada.call('patch', `/console/api/keys/${key.id}`, body),
    ];
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(a.body.error).toMatchObject({ code: 'invalid_request_error', param });
    }
    expect((await c.s.store.getKey(key.id))?.budget).toBeNull();
    expect((await c.s.store.getAccount(adaId))?.budget).toBeNull();
  });

  it('the account holder sets a budget on a key of their own, at creation and later, and sees it in the key list', async () => {
    const created = await ada.call('post', '/console/api/keys', { name: 'daily', budget: { tokens: 1, period: 'day' } });
    expect(created.status).toBe(201);
    expect(created.body.budget).toMatchObject({ tokens: 1, period: 'day', spent: 0, reserved: 0 });
    expect((await post(created.body.key)).body.error.code).toBe('budget_exceeded');
    const changed = await ada.call('patch', `/console/api/keys/${created.body.id}`, { budget: { tokens: 50_000, period: 'week' } });
    expect(changed.status).toBe(200);
    expect(changed.body.budget).toMatchObject({ tokens: 50_000, period: 'week' });
    await post(created.body.key).expect(200);
    await settled(c.proxy);
    const listed = (await ada.call('get', '/console/api/keys')).body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed.budget.spent).toBe(listed.spent);
    expect(listed.budget.spent).toBeGreaterThan(0);
  });

  it("answers another account's key as not found, and leaves its budget alone", async () => {
    const other = await keyWithTokens(c.s.store, 100);
    const answer = await ada.call('patch', `/console/api/keys/${other.id}`, { budget: { tokens: 1, period: 'day' } });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('not_found');
    expect((await c.s.store.getKey(other.id))?.budget).toBeNull();
  });
});
