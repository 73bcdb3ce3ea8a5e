/** The console's sessions, each test named for the attack it stops. */
import { accountWithPassword, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { hashPassword } from '../../src/accounts/password';

describe('console sessions', () => {
  let c: ConsoleFixture;
  let browser: Browser;
  beforeEach(async () => {
    c = await startConsole('redis');
    browser = new Browser(c.proxy.url);
  });
  afterEach(async () => {
    await c.close();
  });

  it('answers 401 in the OpenAI shape without a session, or with a made-up one', async () => {
    for (const cookie of [undefined, 'tm_session=acc_x.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'tm_session=garbage']) {
      browser.cookie = cookie;
      const res = await browser.call('get', '/console/api/me');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'session_required' },
      });
    }
  });

  it('session fixation: a session id planted before login is never the one that gets logged in', async () => {
    const victim = await accountWithPassword(c.s.store, 'victim@example.org');
    const attacker = await accountWithPassword(c.s.store, 'attacker@example.org');
    // The attacker logs in, and plants their own (valid) session cookie in the victim's browser.
    const attackerBrowser = new Browser(c.proxy.url);
    await attackerBrowser.login('attacker@example.org');
    browser.cookie = attackerBrowser.cookie;
    await browser.login('victim@example.org');
    expect(browser.cookie).not.toBe(attackerBrowser.cookie);
    expect((await browser.call('get', '/console/api/me')).body.id).toBe(victim.id);
    // The planted id was ended by the login, so it cannot ride along on the victim's session either.
    const planted = await attackerBrowser.call('get', '/console/api/me');
    expect(planted.status).toBe(401);
    expect(attacker.id).not.toBe(victim.id);
  });

  it('session theft from the store: only a hash of the session id is stored, and the cookie is HttpOnly', async () => {
    await accountWithPassword(c.s.store, 'ada@example.org');
    const login = await browser.login('ada@example.org');
    expect(login.headers['set-cookie']![0]).toContain('HttpOnly');
    const secret = browser.cookie!.split('.')[1];
    const keys = await c.sessions.redis!.keys(`${c.sessions.prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      const r = c.sessions.redis!;
      const type = await r.type(k);
      const dump = JSON.stringify(type === 'hash' ? await r.hgetall(k) : type === 'set' ? await r.smembers(k) : await r.get(k));
      expect(`${k} ${dump}`).not.toContain(secret);
    }
  });

  it('a disabled account’s session stops working at once, and enabling it again does not revive it', async () => {
    const ada = await accountWithPassword(c.s.store, 'ada@example.org');
    await browser.login('ada@example.org');
    const stolen = browser.cookie;
    expect((await browser.call('get', '/console/api/me')).status).toBe(200);
    await c.s.store.updateAccount(ada.id, { status: 'disabled' });
    expect((await browser.call('get', '/console/api/me')).status).toBe(401);
    await c.s.store.updateAccount(ada.id, { status: 'active' });
    browser.cookie = stolen;
    expect((await browser.call('get', '/console/api/me')).status).toBe(401);
    // And a disabled account cannot log in.
    await c.s.store.updateAccount(ada.id, { status: 'disabled' });
    expect((await browser.login('ada@example.org')).status).toBe(401);
  });

  it('a stolen session dies with a password change', async () => {
    const ada = await accountWithPassword(c.s.store, 'ada@example.org');
    await browser.login('ada@example.org');
    await c.s.store.updateAccount(ada.id, { passwordHash: await hashPassword('a brand new passphrase') });
    expect((await browser.call('get', '/console/api/me')).status).toBe(401);
    expect((await browser.login('ada@example.org', 'a brand new passphrase')).status).toBe(200);
    expect((await browser.call('get', '/console/api/me')).status).toBe(200);
  });

  it('a session in use gets its cookie renewed, so its holder is not logged out mid-work', async () => {
    await accountWithPassword(c.s.store, 'ada@example.org');
    await browser.login('ada@example.org');
    const me = await browser.call('get', '/console/api/me');
    expect(me.headers['set-cookie']).toEqual([`${browser.cookie}; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800`]);
  });

  it('logout ends this session; logout everywhere ends the others too', async () => {
    await accountWithPassword(c.s.store, 'ada@example.org');
    const laptop = new Browser(c.proxy.url);
    const phone = new Browser(c.proxy.url);
    await laptop.login('ada@example.org');
    await phone.login('ada@example.org');
    const laptopCookie = laptop.cookie;
    const out = await laptop.call('post', '/console/api/logout', {});
    expect(out.body).toEqual({ logged_out: true });
    expect(out.headers['set-cookie']![0]).toMatch(/^tm_session=; .*Max-Age=0/);
    laptop.cookie = laptopCookie;
    expect((await laptop.call('get', '/console/api/me')).status).toBe(401);
    expect((await phone.call('get', '/console/api/me')).status).toBe(200);

    const tablet = new Browser(c.proxy.url);
    await tablet.login('ada@example.org');
    await tablet.call('post', '/console/api/logout', { everywhere: true });
    expect((await phone.call('get', '/console/api/me')).status).toBe(401);
  });

  it('marks the cookie Secure when the request came over https through a trusted proxy, and only then', async () => {
    await accountWithPassword(c.s.store, 'ada@example.org');
    // TRUST_PROXY is off here: a client cannot claim https for itself.
    const spoofed = await browser.call(
      'post',
      '/console/api/login',
      { email: 'ada@example.org', password: 'correct horse battery' },
      {
        'x-forwarded-proto': 'https',
      },
    );
    expect(spoofed.headers['set-cookie']![0]).not.toContain('Secure');
    const behindProxy = await startConsole('memory', { TRUST_PROXY: 'loopback' });
    try {
      await accountWithPassword(behindProxy.s.store, 'ada@example.org');
      const b = new Browser(behindProxy.proxy.url);
      const res = await b.call(
        'post',
        '/console/api/login',
        { email: 'ada@example.org', password: 'correct horse battery' },
        {
          'x-forwarded-proto': 'https',
        },
      );
      expect(res.headers['set-cookie']![0]).toMatch(/; Secure$/);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('CSRF: a page of another site cannot act with the account holder’s cookie', () => {
  let c: ConsoleFixture;
  let browser: Browser;
  beforeAll(async () => {
    c = await startConsole('memory');
    browser = new Browser(c.proxy.url);
    await accountWithPassword(c.s.store, 'ada@example.org');
    await browser.login('ada@example.org');
  });
  afterAll(async () => {
    await c.close();
  });

  it('refuses a request whose Origin is another site', async () => {
    const res = await browser.call('post', '/console/api/keys', { name: 'evil' }, { origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('cross_site_request');
  });

  it('login CSRF: another site cannot log the victim’s browser into the attacker’s account', async () => {
    const res = await new Browser(c.proxy.url).call(
      'post',
      '/console/api/login',
      { email: 'ada@example.org', password: 'correct horse battery' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    );
    expect(res.status).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('refuses a request the browser marks cross-site or same-site, even without Origin', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const res = await browser.call('delete', '/console/api/keys/key_x', undefined, { 'sec-fetch-site': site });
      expect(res.status).toBe(403);
    }
  });

  it('refuses a form-encoded or text/plain body (what a cross-site form can send without a preflight)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await browser.call('post', '/console/api/keys', '{"name":"evil"}', { 'content-type': type });
      expect(res.status).toBe(415);
    }
  });

  it('created nothing on any of those attempts', async () => {
    expect((await browser.call('get', '/console/api/keys')).body.data).toEqual([]);
  });

  it('lets a script without Origin or Sec-Fetch-Site through (it holds no victim’s cookie)', async () => {
    const res = await browser.call('post', '/console/api/keys', { name: 'script' }, {}, { page: false });
    expect(res.status).toBe(201);
  });
});
