/**
 * GET /console/api/session, the console's first question: 200 whether or not there is a session (so a signed-out
 * browser logs no failed request), the account only with a live session, and a stale session reported as none.
 */
import { sessionSchema } from '../../src/api';
import { accountWithPassword, Browser, startConsole, type ConsoleFixture } from '../helpers/console';

describe('the session probe', () => {
  let c: ConsoleFixture;
  let browser: Browser;
  beforeAll(async () => {
    c = await startConsole('memory');
  });
  beforeEach(() => {
    browser = new Browser(c.proxy.url);
  });
  afterAll(async () => {
    await c.close();
  });

  it('answers 200 signed_in false without a session, or with a made-up one, setting no cookie', async () => {
    for (const cookie of [undefined, 'tm_session=acc_x.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'tm_session=garbage']) {
      browser.cookie = cookie;
      const res = await browser.call('get', '/console/api/session');
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { signed_in: false } });
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('with a live session, names the account as /me does, in its one schema', async () => {
    const ada = await accountWithPassword(c.s.store, 'probe-ada@example.org');
    await browser.login('probe-ada@example.org');
    const res = await browser.call('get', '/console/api/session');
    expect(res.status).toBe(200);
    expect(sessionSchema.parse(res.body)).toEqual({ signed_in: true, account: (await browser.call('get', '/console/api/me')).body });
    expect(res.body.account.id).toBe(ada.id);
  });

  it('a disabled account’s session is reported as none, its cookie cleared and the session ended', async () => {
    const bo = await accountWithPassword(c.s.store, 'probe-bo@example.org');
    await browser.login('probe-bo@example.org');
    const stolen = browser.cookie;
    await c.s.store.updateAccount(bo.id, { status: 'disabled' });
    const res = await browser.call('get', '/console/api/session');
    expect(res.body).toEqual({ signed_in: false });
    expect(browser.cookie).toBeUndefined();
    // Enabled again, the old cookie still opens nothing.
    await c.s.store.updateAccount(bo.id, { status: 'active' });
    browser.cookie = stolen;
    expect((await browser.call('get', '/console/api/session')).body).toEqual({ signed_in: false });
  });

  it('cross-site: grants no CORS read, so a page on another site cannot learn who is signed in', async () => {
    await accountWithPassword(c.s.store, 'probe-cy@example.org');
    await browser.login('probe-cy@example.org');
    const res = await browser.call('get', '/console/api/session', undefined, {
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });
});
