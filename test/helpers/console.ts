/**
 * The console under test: a proxy with its stores, session and commerce stores included, a test upstream, and a
 * small browser that keeps its session cookie and sends what a same-origin page would (Origin, JSON).
 */
import request from 'supertest';
import { hashPassword } from '../../src/accounts/password';
import type { ModelEntry } from '../../src/catalog/models';
import type { AccountRecord } from '../../src/store/records/account';
import type { Store } from '../../src/store/ports/store';
import { makeCommerceStore, makeSessionStore, type Under } from './console-stores';
import { startProxy, type ProxyUnderTest } from './proxy';
import { makeStore, type StoreKind, type StoreUnderTest } from './stores';
import { startUpstream, type TestUpstream } from './upstream';
import type { CommerceStore } from '../../src/store/ports/commerce-store';
import type { SessionStore } from '../../src/store/ports/session-store';

export const ADMIN_TOKEN = 'console-test-admin-token';
export const PASSWORD = 'correct horse battery';

export interface ConsoleFixture {
  s: StoreUnderTest;
  sessions: Under<SessionStore>;
  commerce: Under<CommerceStore>;
  upstream: TestUpstream;
  proxy: ProxyUnderTest;
  close(): Promise<void>;
}

export async function startConsole(
  kind: StoreKind,
  env: Record<string, string> = {},
  options: { models?: Partial<ModelEntry>[] } = {},
): Promise<ConsoleFixture> {
  const s = await makeStore(kind);
  const sessions = await makeSessionStore(kind);
  const commerce = await makeCommerceStore(kind);
  const upstream = await startUpstream();
  const proxy = await startProxy({
    store: s.store,
    sessions: sessions.store,
    commerce: commerce.store,
    upstreamUrl: upstream.url,
    env: { ADMIN_TOKEN, ...env },
    models: options.models,
  });
  return {
    s,
    sessions,
    commerce,
    upstream,
    proxy,
    close: async () => {
      await proxy.close();
      await upstream.close();
      await Promise.all([s.close(), sessions.close(), commerce.close()]);
    },
  };
}

/** An account with a password, made the way the operator would. */
export async function accountWithPassword(store: Store, email: string, role: 'member' | 'admin' = 'member'): Promise<AccountRecord> {
  const created = await store.createAccount({
    email,
    name: email.split('@')[0],
    passwordHash: await hashPassword(PASSWORD),
    role,
    status: 'active',
  });
  if (created.kind !== 'created') throw new Error(`${email} is taken`);
  return created.account;
}

export interface Reply {
  status: number;
  body: any; // tests read whatever came back
  headers: Record<string, string | string[] | undefined>;
}

/** A same-origin page of the console: keeps the session cookie it is given and sends it back. */
export class Browser {
  cookie: string | undefined;
  constructor(readonly url: string) {}

  get host(): string {
    return new URL(this.url).host;
  }

  /** `page: false` sends what a script would: no Origin, no Sec-Fetch-Site. */
  async call(
    method: 'get' | 'post' | 'patch' | 'delete',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    options: { page?: boolean } = {},
  ): Promise<Reply> {
    let req = request(this.url)[method](path);
    if (options.page !== false) req = req.set('origin', this.url).set('sec-fetch-site', 'same-origin');
    if (this.cookie) req = req.set('cookie', this.cookie);
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    const res = body === undefined ? await req : await req.send(body as object);
    const setCookie = res.headers['set-cookie'] as unknown as string[] | undefined;
    for (const line of setCookie ?? []) {
      if (!line.startsWith('tm_session=')) continue;
      const value = line.slice(0, line.indexOf(';'));
      this.cookie = /Max-Age=0/.test(line) ? undefined : value;
    }
    return { status: res.status, body: res.body, headers: res.headers };
  }

  async login(email: string, password = PASSWORD): Promise<Reply> {
    return this.call('post', '/console/api/login', { email, password });
  }
}

/** Operator calls with ADMIN_TOKEN. */
export function admin(url: string) {
  return {
    post: (path: string, body: object) => request(url).post(path).set('authorization', `Bearer ${ADMIN_TOKEN}`).send(body),
    get: (path: string) => request(url).get(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
    patch: (path: string, body: object) => request(url).patch(path).set('authorization', `Bearer ${ADMIN_TOKEN}`).send(body),
  };
}
