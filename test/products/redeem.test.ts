/** Redemption codes through the console: one credit per code, whoever races for it on however many processes. */
import { ADMIN_TOKEN, accountWithPassword, admin, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { startProxy, type ProxyUnderTest } from '../helpers/proxy';
import { redeemCode } from '../../src/products/redeem';
import { hashCode } from '../../src/products/codes';
import { Sessions } from '../../src/accounts/sessions';

describe('redemption codes', () => {
  let c: ConsoleFixture;
  let second: ProxyUnderTest;
  beforeAll(async () => {
    c = await startConsole('redis');
    second = await startProxy({
      store: c.s.store,
      sessions: c.sessions.store,
      commerce: c.commerce.store,
      upstreamUrl: c.upstream.url,
      env: { ADMIN_TOKEN },
    });
  });
  afterAll(async () => {
    await second.close();
    await c.close();
  });

  const newCode = async (body: object = { tokens: 1000 }) => {
    const res = await admin(c.proxy.url).post('/admin/redemption-codes', body);
    expect(res.status).toBe(201);
    return res.body.data[0] as { id: string; code: string };
  };

  it('50 accounts redeeming one code at once, on two processes: exactly one package is credited', async () => {
    const { code } = await newCode({ tokens: 7777 });
    const accounts = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const created = await c.s.store.createAccount({
          email: `racer${i}@example.org`,
          name: '',
          passwordHash: null,
          role: 'member',
          status: 'active',
        });
        if (created.kind !== 'created') throw new Error('taken');
        return created.account.id;
      }),
    );
    // Sessions made directly in the store: 50 scrypt logins would only slow the test, not change the race.
    const browsers = await Promise.all(
      accounts.map(async (id, i) => {
        const b = new Browser(i % 2 === 0 ? c.proxy.url : second.url);
        b.cookie = `tm_session=${await new Sessions(c.sessions.store, 60_000, 3_600_000).start({ id, passwordHash: null })}`;
        return b;
      }),
    );
    const replies = await Promise.all(browsers.map((b) => b.call('post', '/console/api/redeem', { code })));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    const losers = replies.filter((r) => r.status === 400);
    expect(losers).toHaveLength(49);
    expect(losers.every((r) => r.body.error.code === 'redemption_code_used')).toBe(true);
    const balances = await Promise.all(accounts.map(async (id) => (await c.s.store.getAccount(id))!.balance));
    expect(balances.filter((b) => b === 7777)).toHaveLength(1);
    expect(balances.reduce((a, b) => a + b, 0)).toBe(7777);
  });

  it('tells a used, an expired and an unknown code apart, with a 400 and a clear code', async () => {
    await accountWithPassword(c.s.store, 'ada@example.org');
    const b = new Browser(c.proxy.url);
    await b.login('ada@example.org');
    const { code } = await newCode();
    expect((await b.call('post', '/console/api/redeem', { code: code.toLowerCase().replaceAll('-', ' ') })).status).toBe(201);
    expect((await b.call('post', '/console/api/redeem', { code })).body.error).toMatchObject({
      code: 'redemption_code_used',
      param: 'code',
    });
    expect((await b.call('post', '/console/api/redeem', { code: 'TM-NOPE-NOPE' })).body.error.code).toBe('redemption_code_invalid');
    // Far enough ahead that a loaded machine still creates it unexpired; then wait until it has passed.
    const expiresAt = Math.floor(Date.now() / 1000) + 3;
    const soon = await newCode({ tokens: 5, expires_at: expiresAt });
    await new Promise((r) => setTimeout(r, expiresAt * 1000 - Date.now() + 1_100));
    const expired = await b.call('post', '/console/api/redeem', { code: soon.code });
    expect(expired.status).toBe(400);
    expect(expired.body.error.code).toBe('redemption_code_expired');
  });

  it('a crash between claim and credit loses nothing: the same account’s retry completes it, once', async () => {
    const created = await c.s.store.createAccount({
      email: 'crash@example.org',
      name: '',
      passwordHash: null,
      role: 'member',
      status: 'active',
    });
    if (created.kind !== 'created') throw new Error('taken');
    const id = created.account.id;
    const { code } = await newCode({ tokens: 4242 });
    // The claim happened, then the process died before crediting.
    expect((await c.commerce.store.claimCode(hashCode(code), id)).kind).toBe('claimed');
    expect((await c.s.store.getAccount(id))!.balance).toBe(0);
    const retried = await redeemCode({ store: c.s.store, commerce: c.commerce.store }, id, code);
    expect(retried).toMatchObject({ kind: 'redeemed', package: { tokens: 4242 } });
    expect((await c.s.store.getAccount(id))!.balance).toBe(4242);
    // A crash after the credit but before it was marked: the retry credits nothing more.
    const again = await c.commerce.store.claimCode(hashCode(code), id);
    expect(again.kind).toBe('used');
    expect((await c.s.store.getAccount(id))!.balance).toBe(4242);
  });

  it('a crash after the credit, before it was marked: the retry answers the package and credits nothing more', async () => {
    const created = await c.s.store.createAccount({
      email: 'crash2@example.org',
      name: '',
      passwordHash: null,
      role: 'member',
      status: 'active',
    });
    if (created.kind !== 'created') throw new Error('taken');
    const id = created.account.id;
    const made = await newCode({ tokens: 300 });
    const claim = await c.commerce.store.claimCode(hashCode(made.code), id);
    if (claim.kind !== 'claimed') throw new Error('not claimed');
    await c.s.store.grantPackage(id, { tokens: 300, expiresAt: null }, { once: `code:${claim.code.id}` });
    const retried = await redeemCode({ store: c.s.store, commerce: c.commerce.store }, id, made.code);
    expect(retried.kind).toBe('redeemed');
    expect((await c.s.store.getAccount(id))!.balance).toBe(300);
  });
});
