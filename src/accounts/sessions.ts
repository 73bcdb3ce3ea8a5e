/**
 * Console sessions: a random id in an HttpOnly cookie, only its SHA-256 in the store, ended after SESSION_IDLE_HOURS
 * unused and SESSION_MAX_HOURS after it started however much it is used (so a stolen cookie kept busy still dies).
 * The cookie carries the account id too, so a session lives under its account's hash tag and ending all of an
 * account's sessions is one step.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { SessionStore } from '../store/ports/session-store';

export const SESSION_COOKIE = 'tm_session';

/** `<account id>.<43 characters of base64url>`: 256 random bits. */
const COOKIE_VALUE = /^([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/;

export interface SessionCookieOptions {
  /** Set when the request came over https (directly, or through a trusted proxy). */
  secure: boolean;
}

export class Sessions {
  /** `maxMs`: the absolute lifetime of a session; a session started before a smaller one was set ends by it too. */
  constructor(
    private readonly store: SessionStore,
    private readonly idleMs: number,
    private readonly maxMs: number,
  ) {}

  /**
   * Starts a session for the account: a fresh id every login, so no id chosen before login is ever honoured. The
   * stamp is a digest of the account's password hash: a new password ends every session started under the old one.
   */
  async start(account: { id: string; passwordHash: string | null }): Promise<string> {
    const secret = randomBytes(32).toString('base64url');
    await this.store.createSession({
      accountId: account.id,
      hash: hashSessionSecret(secret),
      idleMs: this.idleMs,
      maxMs: this.maxMs,
      stamp: stampOf(account),
    });
    return `${account.id}.${secret}`;
  }

  /** The account id, stamp and start (Unix seconds) of a live session (its idle time restarted), or undefined. */
  async resume(cookieValue: string | undefined): Promise<{ accountId: string; stamp: string; created: number } | undefined> {
    const parsed = parseCookieValue(cookieValue);
    if (!parsed) return undefined;
    const session = await this.store.touchSession(parsed.accountId, hashSessionSecret(parsed.secret), this.idleMs, this.maxMs);
    return session && { accountId: session.accountId, stamp: session.stamp, created: session.created };
  }

  /** The account id and stamp of a live session, read without restarting its idle time; or undefined. */
  async peek(cookieValue: string | undefined): Promise<{ accountId: string; stamp: string } | undefined> {
    const parsed = parseCookieValue(cookieValue);
    if (!parsed) return undefined;
    const session = await this.store.readSession(parsed.accountId, hashSessionSecret(parsed.secret), this.maxMs);
    return session && { accountId: session.accountId, stamp: session.stamp };
  }

  async end(cookieValue: string | undefined): Promise<void> {
    const parsed = parseCookieValue(cookieValue);
    if (parsed) await this.store.deleteSession(parsed.accountId, hashSessionSecret(parsed.secret));
  }

  endAll(accountId: string): Promise<number> {
    return this.store.deleteAccountSessions(accountId);
  }

  /**
   * Ends every other session of the account and keeps this one, under the account's stamp as it is now (after a
   * password change); resolves to how many ended.
   */
  async keepOnly(cookieValue: string | undefined, account: { id: string; passwordHash: string | null }): Promise<number> {
    const parsed = parseCookieValue(cookieValue);
    if (!parsed || parsed.accountId !== account.id) return this.endAll(account.id);
    return this.store.keepOnlySession(account.id, hashSessionSecret(parsed.secret), stampOf(account));
  }

  /** The Set-Cookie value for a session: it lasts the idle time, and never past the session's end (`created`, s). */
  cookie(value: string, options: SessionCookieOptions, created?: number): string {
    const left = created === undefined ? this.maxMs : created * 1000 + this.maxMs - Date.now();
    const maxAge = Math.max(0, Math.floor(Math.min(this.idleMs, left) / 1000));
    return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${options.secure ? '; Secure' : ''}`;
  }

  /** The Set-Cookie value that removes the session cookie. */
  clearCookie(options: SessionCookieOptions): string {
    return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${options.secure ? '; Secure' : ''}`;
  }
}

/** What a session must have been started under to stay valid for the account as it is now. */
export function stampOf(account: { passwordHash: string | null }): string {
  return createHash('sha256')
    .update(account.passwordHash ?? '')
    .digest('hex')
    .slice(0, 16);
}

export function hashSessionSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function parseCookieValue(value: string | undefined): { accountId: string; secret: string } | undefined {
  const m = value === undefined ? null : COOKIE_VALUE.exec(value);
  return m ? { accountId: m[1], secret: m[2] } : undefined;
}

/** The session cookie's value from a Cookie header; the first one wins when a client sends several. */
export function sessionCookieValue(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}
