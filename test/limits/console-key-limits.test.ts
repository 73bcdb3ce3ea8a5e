/** An account holder may restrict a key of their own through the self-service API: the limits apply to its requests. */
import request from 'supertest';
import { accountWithPassword, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { chatBody } from '../helpers/proxy';

describe('key limits through the console API', () => {
  let c: ConsoleFixture;
  let ada: Browser;
  beforeAll(async () => {
    c = await startConsole('memory');
    const account = await accountWithPassword(c.s.store, 'ada@example.org');
    await c.s.store.grantPackage(account.id, { tokens: 100_000, expiresAt: null });
    ada = new Browser(c.proxy.url);
    await ada.login('ada@example.org');
  });
  afterAll(async () => {
    await c.close();
  });

  it('creates a key with limits, lists them, and the proxy holds the key to them', async () => {
    const created = await ada.call('post', '/console/api/keys', { name: 'batch', limits: { rpm: 1 } });
    expect(created.status).toBe(201);
    expect(created.body.limits).toEqual({ rpm: 1 });
    expect((await ada.call('get', '/console/api/keys')).body.data[0].limits).toEqual({ rpm: 1 });
    const post = () =>
      request(c.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${created.body.key}`).send(chatBody());
    await post().expect(200);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/on this key: limit 1/);
  });

  it('refuses bad limits with a 400 naming the field', async () => {
    const bad = await ada.call('post', '/console/api/keys', { name: 'x', limits: { tpm: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('limits.tpm');
  });
});
