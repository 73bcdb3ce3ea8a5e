/**
 * SIGNUP_TOKENS: each self-service registration gets one trial package, valid SIGNUP_TOKENS_VALID_DAYS, and a second
 * registration of the same email (a retried request, a replay) gets nothing; without it a new account starts at 0.
 */
import { startConsole, type ConsoleFixture } from '../helpers/console';
import { storeKinds } from '../helpers/stores';
import request from 'supertest';

describe.each(storeKinds)('registration with SIGNUP_TOKENS (%s store)', (kind) => {
  let c: ConsoleFixture;
  beforeAll(async () => {
    c = await startConsole(kind, { ACCOUNT_REGISTRATION: 'open', SIGNUP_TOKENS: '25000', SIGNUP_TOKENS_VALID_DAYS: '30' });
  });
  afterAll(() => c.close());

  const register = (email: string) =>
    request(c.proxy.url).post('/console/api/register').send({ email, password: 'a long passphrase', name: 'New' });

  it('credits the trial package once per account, however often the registration is sent', async () => {
    const sent = await Promise.all([register('trial@example.org'), register('trial@example.org'), register('trial@example.org')]);
    expect(sent.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(sent.find((r) => r.status === 409)!.body.error.code).toBe('email_taken');
    const id = sent.find((r) => r.status === 201)!.body.id as string;
    expect((await register('trial@example.org')).status).toBe(409);
    const account = (await c.s.store.getAccount(id))!;
    expect(account.balance).toBe(25_000);
    expect(account.packages).toHaveLength(1);
    expect(account.packages[0].expiresAt! - account.packages[0].created).toBe(30 * 86_400);
  });
});

describe('registration without SIGNUP_TOKENS', () => {
  it('starts a new account at 0 tokens', async () => {
    const c = await startConsole('memory', { ACCOUNT_REGISTRATION: 'open' });
    try {
      const res = await request(c.proxy.url)
        .post('/console/api/register')
        .send({ email: 'zero@example.org', password: 'a long passphrase' });
      expect(res.status).toBe(201);
      expect((await c.s.store.getAccount(res.body.id))!.balance).toBe(0);
    } finally {
      await c.close();
    }
  });
});
