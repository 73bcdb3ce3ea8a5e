/**
 * The account holder's own password change and the sessions' absolute lifetime, each test named for the attack it
 * stops: a stolen session outlives neither a password change nor SESSION_MAX_HOURS, and cannot change the password
 * without knowing it.
 */
import { createHash } from 'node:crypto';
import { verifyPassword } from '../../src/accounts/password';
import { MemorySessionStore } from '../../src/store/memory/memory-session-store';
import { accountWithPassword, Browser, PASSWORD, startConsole, type ConsoleFixture } from '../helpers/console';
import { startProxy } from '../helpers/proxy';
import { makeStore, storeKinds } from '../helpers/stores';
import { startUpstream } from '../helpers/upstream';

const NEW_PASSWORD = 'a brand new passphrase';
const HOUR = 3_600_000;

describe.each(storeKinds)('password change (%s store)', (kind) => {
  let c: ConsoleFixture;
  beforeEach(async () => {
    c = await startConsole(kind, { LOGIN_MAX_FAILURES: '3' });
    await accountWithPassword(c.s.store, 'ada@example.org');
  });
  afterEach(async () => {
    await c.close();
  });

  const change = (b: Browser, current: string, next = NEW_PASSWORD) =>
    b.call('post', '/console/api/password', { current_password: current, new_password: next });

  it('a password change ends every other session (a thief’s) and keeps the one it was made in', async () => {
    const holder = new Browser(c.proxy.url);
    const thief = new Browser(c.proxy.url);
    await holder.login('ada@example.org');
    await thief.login('ada@example.org');
    const res = await change(holder, PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ password_changed: true, sessions_ended: 1 });
    expect((await holder.call('get', '/console/api/me')).status).toBe(200);
    expect((await thief.call('get', '/console/api/me')).status).toBe(401);
    // The new password is the one that logs in now, hashed with scrypt as at registration.
    expect((await new Browser(c.proxy.url).login('ada@example.org', PASSWORD)).status).toBe(401);
    expect((await new Browser(c.proxy.url).login('ada@example.org', NEW_PASSWORD)).status).toBe(200);
    const stored = (await c.s.store.findAccountByEmail('ada@example.org'))!.passwordHash!;
    expect(stored).toMatch(/^scrypt\$/);
    expect(await verifyPassword(NEW_PASSWORD, stored)).toBe(true);
    expect(c.proxy.logs.join('')).not.toContain(NEW_PASSWORD);
  });

  it('a stolen session cannot change the password without the current one, nor guess it faster than a login', async () => {
    const thief = new Browser(c.proxy.url);
    await thief.login('ada@example.org');
    for (let i = 0; i < 3; i++) {
      const wrong = await change(thief, `guess number ${i}`);
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toMatchObject({ code: 'invalid_request_error', param: 'current_password' });
    }
    const throttled = await change(thief, PASSWORD);
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe('too_many_attempts');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    // The guesses count against the account as failed logins do; and the password is still the old one.
    expect((await new Browser(c.proxy.url).login('ada@example.org', PASSWORD)).status).toBe(429);
    const stored = (await c.s.store.findAccountByEmail('ada@example.org'))!.passwordHash!;
    expect(await verifyPassword(PASSWORD, stored)).toBe(true);
  });

  it('holds the new password to the rules of registration, and needs a session', async () => {
    const holder = new Browser(c.proxy.url);
    await holder.login('ada@example.org');
    const short = await change(holder, PASSWORD, 'short');
    expect(short.status).toBe(400);
    expect(short.body.error.param).toBe('new_password');
    const extra = await holder.call('post', '/console/api/password', { current_password: PASSWORD, new_password: NEW_PASSWORD, role: 'x' });
    expect(extra.body.error.param).toBe('role');
    expect((await change(new Browser(c.proxy.url), PASSWORD)).status).toBe(401);
  });
});

describe('absolute session lifetime', () => {
  it('a session kept in use still ends SESSION_MAX_HOURS after login (redis store: its start moved back)', async () => {
    const c = await startConsole('redis');
    try {
      await accountWithPassword(c.s.store, 'ada@example.org');
      const holder = new Browser(c.proxy.url);
      const ada = (await holder.login('ada@example.org')).body as { id: string };
      const secret = holder.cookie!.split('.')[1];
      const key = `${c.sessions.prefix}{${ada.id}}:ss:${createHash('sha256').update(secret).digest('hex')}`;
      const startedAgo = async (hours: number) => {
        const ms = Date.now() - hours * HOUR;
        await c.sessions.redis!.hset(key, 'created', Math.floor(ms / 1000), 'created_ms', ms);
      };
      // Started 719 hours ago and used now: alive, its cookie no longer than the hour it has left.
      await startedAgo(719);
      const late = await holder.call('get', '/console/api/me');
      expect(late.status).toBe(200);
      const maxAge = Number(/Max-Age=(\d+)/.exec(String(late.headers['set-cookie']))![1]);
      expect(maxAge).toBeLessThanOrEqual(3600);
      expect(maxAge).toBeGreaterThan(3000);
      // 721 hours: over, though it was used a moment ago and is far from its idle time.
      await startedAgo(721);
      expect((await holder.call('get', '/console/api/me')).status).toBe(401);
    } finally {
      await c.close();
    }
  });

  it('a session kept in use still ends SESSION_MAX_HOURS after login (memory store, on its own clock)', async () => {
    let now = Date.now();
    const s = await makeStore('memory');
    const upstream = await startUpstream();
    const proxy = await startProxy({
      store: s.store,
      sessions: new MemorySessionStore(() => now),
      upstreamUrl: upstream.url,
      env: { SESSION_MAX_HOURS: '48', SESSION_IDLE_HOURS: '24' },
    });
    try {
      await accountWithPassword(s.store, 'ada@example.org');
      const holder = new Browser(proxy.url);
      expect((await holder.login('ada@example.org')).status).toBe(200);
      // Used every 20 hours (well within its 24 idle hours): alive at 20 and 40 hours, over at 60.
      for (const alive of [true, true, false]) {
        now += 20 * HOUR;
        expect((await holder.call('get', '/console/api/me')).status).toBe(alive ? 200 : 401);
      }
    } finally {
      await proxy.close();
      await upstream.close();
      await s.close();
    }
  });
});
