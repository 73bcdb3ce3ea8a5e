/**
 * The model page for whoever is signed in: the console's navigation, their email and a Sign out form from a live
 * session, read without changing it; nothing of an account without one. And the form's sign-out, which a browser
 * posts as a navigation: it ends the session and goes on to the sign-in page.
 */
import request from 'supertest';
import { MEMBER_PAGES, OPERATOR_PAGES } from '../../src/console/console-nav';
import { accountWithPassword, Browser, startConsole, type ConsoleFixture } from '../helpers/console';

/** What a browser sends when a page's form posts with no fields, as a navigation. */
const FORM_POST = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', 'content-type': 'application/x-www-form-urlencoded' };

describe('the model page and the session', () => {
  let c: ConsoleFixture;
  beforeEach(async () => {
    c = await startConsole('redis');
  });
  afterEach(async () => {
    await c.close();
  });

  const modelPage = (cookie?: string) => {
    const req = request(c.proxy.url).get('/console/models');
    return cookie ? req.set('cookie', cookie) : req;
  };
  const signedIn = async (email: string, role: 'member' | 'admin' = 'member') => {
    const account = await accountWithPassword(c.s.store, email, role);
    const browser = new Browser(c.proxy.url);
    expect((await browser.login(email)).status).toBe(200);
    return { account, browser, cookie: browser.cookie! };
  };
  /** The words of the main navigation's links, in order. */
  const linksOf = (page: string) => {
    const nav = /<nav aria-label="Main">([^]*?)<\/nav>/.exec(page)?.[1] ?? '';
    return [...nav.matchAll(/<a href="[^"]+"[^>]*>([^<]+)<\/a>/g)].map((m) => m[1]);
  };

  it('shows a signed-in member the console’s navigation, their email and Sign out, and sets no cookie', async () => {
    const { cookie } = await signedIn('ada@example.org');
    const res = await modelPage(cookie);
    expect(res.status).toBe(200);
    for (const p of MEMBER_PAGES) expect(res.text).toContain(`>${p.label}</a>`);
    expect(res.text).toContain('<a href="/console/models" aria-current="page">Models</a>');
    for (const p of OPERATOR_PAGES) expect(res.text).not.toContain(`href="${p.path}"`);
    expect(res.text).toContain('ada@example.org');
    expect(res.text).toMatch(
      /<form method="post" action="\/console\/api\/logout">\s*<button type="submit" class="link">Sign out<\/button>/,
    );
    // A page naming the account is no shared cache's to keep, and reading the session refreshes nothing.
    expect(res.headers['cache-control']).toContain('private');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('shows an operator their pages too, in the same order as the console', async () => {
    const { cookie } = await signedIn('ops@example.org', 'admin');
    const links = linksOf((await modelPage(cookie)).text);
    expect(links).toEqual([...MEMBER_PAGES.map((p) => p.label), ...OPERATOR_PAGES.map((p) => p.label), 'Models']);
  });

  it('shows no account’s links without a session, with a forged or ended one, or for a disabled account', async () => {
    const none = await modelPage();
    expect(linksOf(none.text)).toEqual(['Models', 'Console']);
    expect(none.text).not.toContain('Sign out');
    expect(none.headers['cache-control']).toBe('no-cache');

    const { account, browser, cookie } = await signedIn('ada@example.org');
    expect((await modelPage(`tm_session=${account.id}.${'A'.repeat(43)}`)).text).not.toContain('Sign out');

    await c.s.store.updateAccount(account.id, { status: 'disabled' });
    expect((await modelPage(cookie)).text).not.toContain('Sign out');
    // Read-only: the page ended nothing, so the session is back with the account (the API's check would have ended it).
    await c.s.store.updateAccount(account.id, { status: 'active' });
    expect((await modelPage(cookie)).text).toContain('Sign out');

    expect((await browser.call('post', '/console/api/logout', {})).status).toBe(200);
    expect((await modelPage(cookie)).text).not.toContain('Sign out');
  });

  it('signs out with the page’s plain form: the session ends and the browser goes on to sign in', async () => {
    const { browser, cookie } = await signedIn('ada@example.org');
    const res = await browser.call('post', '/console/api/logout', undefined, FORM_POST);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console/signin');
    expect(String(res.headers['set-cookie'])).toMatch(/^tm_session=; .*Max-Age=0/);
    const old = new Browser(c.proxy.url);
    old.cookie = cookie;
    expect((await old.call('get', '/console/api/me')).status).toBe(401);
  });

  it('refuses the same form posted from another site (CSRF), leaving the session as it was', async () => {
    const { browser } = await signedIn('ada@example.org');
    const res = await browser.call('post', '/console/api/logout', undefined, { ...FORM_POST, 'sec-fetch-site': 'cross-site' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('cross_site_request');
    expect((await browser.call('get', '/console/api/me')).status).toBe(200);
  });
});
