/** Password guessing and account enumeration against the console's login and registration, each test named for its attack. */
import { ADMIN_TOKEN, accountWithPassword, Browser, PASSWORD, startConsole, type ConsoleFixture } from '../helpers/console';
import { startProxy } from '../helpers/proxy';
import { storeKinds } from '../helpers/stores';

const env = { LOGIN_MAX_FAILURES: '3', LOGIN_FAILURE_WINDOW_MINUTES: '15' };

describe('password guessing', () => {
  let c: ConsoleFixture;
  beforeEach(async () => {
    c = await startConsole('redis', env);
    await accountWithPassword(c.s.store, 'ada@example.org');
  });
  afterEach(async () => {
    await c.close();
  });

  it('stops guesses at the limit with 429 and Retry-After, and then refuses even the right password', async () => {
    const attacker = new Browser(c.proxy.url);
    for (let i = 0; i < 3; i++) expect((await attacker.login('ada@example.org', `guess number ${i}`)).status).toBe(401);
    const refused = await attacker.login('ada@example.org', PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('too_many_attempts');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(14 * 60);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
    expect(attacker.cookie).toBeUndefined();
  });

  it('lets no more guesses through when they arrive all at once', async () => {
    const attacker = new Browser(c.proxy.url);
    const replies = await Promise.all(Array.from({ length: 15 }, (_, i) => attacker.login('ada@example.org', `guess number ${i}`)));
    expect(replies.filter((r) => r.status === 401)).toHaveLength(3);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(12);
  });

  it('counts guesses on every process together (the windows are in the shared store)', async () => {
    const second = await startProxy({
      store: c.s.store,
      sessions: c.sessions.store,
      commerce: c.commerce.store,
      upstreamUrl: c.upstream.url,
      env: { ADMIN_TOKEN, ...env },
    });
    try {
      expect((await new Browser(c.proxy.url).login('ada@example.org', 'guess one x')).status).toBe(401);
      expect((await new Browser(second.url).login('ada@example.org', 'guess two x')).status).toBe(401);
      expect((await new Browser(c.proxy.url).login('ada@example.org', 'guess three')).status).toBe(401);
      expect((await new Browser(second.url).login('ada@example.org', PASSWORD)).status).toBe(429);
    } finally {
      await second.close();
    }
  });

  it('limits one address guessing across many accounts (password spraying)', async () => {
    const attacker = new Browser(c.proxy.url);
    for (const email of ['a@example.org', 'b@example.org', 'ada@example.org']) {
      expect((await attacker.login(email, 'Summer2024!!')).status).toBe(401);
    }
    expect((await attacker.login('c@example.org', 'Summer2024!!')).status).toBe(429);
  });

  it('a correct password gives its attempt back: the holder is not locked out by their own logins', async () => {
    const holder = new Browser(c.proxy.url);
    for (let i = 0; i < 6; i++) expect((await holder.login('ada@example.org')).status).toBe(200);
  });
});

describe.each(storeKinds)('sign-ups and logins from one address (%s store)', (kind) => {
  let c: ConsoleFixture;
  beforeEach(async () => {
    c = await startConsole(kind, { ...env, ACCOUNT_REGISTRATION: 'open', REGISTRATIONS_PER_HOUR: '5' });
    await accountWithPassword(c.s.store, 'ada@example.org');
  });
  afterEach(async () => {
    await c.close();
  });

  it('sign-ups cannot lock an honest user out of login', async () => {
    // Behind a proxy without TRUST_PROXY every client is one address: here, the bots and Ada share 127.0.0.1.
    const bots = new Browser(c.proxy.url);
    for (let i = 0; i < 5; i++) {
      const res = await bots.call('post', '/console/api/register', { email: `bot${i}@example.org`, password: 'long enough pw' });
      expect(res.status).toBe(201);
    }
    const refused = await bots.call('post', '/console/api/register', { email: 'bot5@example.org', password: 'long enough pw' });
    expect(refused.status).toBe(429);
    // The registration budget is per hour, not the failed-login window.
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(15 * 60);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60 * 60);
    expect((await new Browser(c.proxy.url).login('ada@example.org')).status).toBe(200);
  });
});

describe('account enumeration', () => {
  let c: ConsoleFixture;
  beforeEach(async () => {
    c = await startConsole('memory', { ...env, ACCOUNT_REGISTRATION: 'open', REGISTRATIONS_PER_HOUR: '3' });
    await accountWithPassword(c.s.store, 'ada@example.org');
  });
  afterEach(async () => {
    await c.close();
  });

  it('login answers an unknown email exactly as a wrong password', async () => {
    const b = new Browser(c.proxy.url);
    const unknown = await b.login('nobody@example.org', 'some password');
    const wrong = await b.login('ada@example.org', 'some password');
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
  });

  it('registration says a taken email is taken, but each such answer counts against the address', async () => {
    const b = new Browser(c.proxy.url);
    const taken = await b.call('post', '/console/api/register', { email: 'ada@example.org', password: 'long enough pw' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'email_taken', param: 'email' });
    for (const email of ['ada@example.org', 'ada@example.org'])
      await b.call('post', '/console/api/register', { email, password: 'long enough pw' });
    const probe = await b.call('post', '/console/api/register', { email: 'other@example.org', password: 'long enough pw' });
    expect(probe.status).toBe(429);
  });

  it('account spam: an address registers no more accounts per hour than the limit', async () => {
    const b = new Browser(c.proxy.url);
    for (let i = 0; i < 3; i++) {
      expect((await b.call('post', '/console/api/register', { email: `bot${i}@example.org`, password: 'long enough pw' })).status).toBe(
        201,
      );
    }
    expect((await b.call('post', '/console/api/register', { email: 'bot3@example.org', password: 'long enough pw' })).status).toBe(429);
    expect(await c.s.store.findAccountByEmail('bot3@example.org')).toBeUndefined();
  });

  it('refuses a short password and unknown fields with a 400 naming the field', async () => {
    const b = new Browser(c.proxy.url);
    const short = await b.call('post', '/console/api/register', { email: 'new@example.org', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.error.param).toBe('password');
    const extra = await b.call('post', '/console/api/register', { email: 'new@example.org', password: 'long enough pw', role: 'admin' });
    expect(extra.status).toBe(400);
    expect(extra.body.error.param).toBe('role');
  });
});

describe('registration closed (the default)', () => {
  it('answers 403 registration_closed and creates nothing', async () => {
    const c = await startConsole('memory');
    try {
      const res = await new Browser(c.proxy.url).call('post', '/console/api/register', {
        email: 'new@example.org',
        password: 'long enough pw',
      });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('registration_closed');
      expect(await c.s.store.findAccountByEmail('new@example.org')).toBeUndefined();
    } finally {
      await c.close();
    }
  });
});
