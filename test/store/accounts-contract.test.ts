/** The account port (AccountStore), one contract for both stores: accounts, their balances, and idempotent grants. */
import { itOnRedis, makeStore, keyWithTokens, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { MAX_GRANT_TOKENS } from '../../src/store/records/account';
import { accountId, member, nowS, reserveReq, settlement } from './contract-fixtures';

describe.each(storeKinds)('%s store: account port', (kind) => {
  const redisOnly = itOnRedis(kind);
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });

  describe('accounts', () => {
    it('creates an account with a fresh balance and finds it by its email', async () => {
      const created = await s.store.createAccount(member('ada@example.com'));
      expect(created).toMatchObject({
        kind: 'created',
        account: { email: 'ada@example.com', name: 'Ada', role: 'member', status: 'active' },
      });
      const id = (created as { account: { id: string } }).account.id;
      expect(id).toMatch(/^acc_/);
      expect(await s.store.findAccountByEmail('ada@example.com')).toMatchObject({ id, passwordHash: 'scrypt$stub' });
      expect(await s.store.findAccountByEmail('bob@example.com')).toBeUndefined();
      expect(await s.store.getAccount(id)).toMatchObject({ id, balance: 0, reserved: 0, debt: 0, packages: [], usage: { requests: 0 } });
      expect(await s.store.getAccount('acc_missing')).toBeUndefined();
    });

    it('refuses a second account with the same email, even when both are created at once', async () => {
      const results = await Promise.all(Array.from({ length: 10 }, () => s.store.createAccount(member('same@example.com'))));
      expect(results.filter((r) => r.kind === 'created')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'email_taken')).toHaveLength(9);
      expect(await s.store.listAccounts({ limit: 100 })).toHaveLength(1);
      // Accounts without an email never clash.
      expect((await s.store.createAccount(member(null))).kind).toBe('created');
      expect((await s.store.createAccount(member(null))).kind).toBe('created');
    });

    it('credits a trial package in the step that makes the account, once: a second registration of the email grants nothing', async () => {
      const trial = { tokens: 5_000, validDays: 14 };
      const results = await Promise.all(Array.from({ length: 5 }, () => s.store.createAccount({ ...member('new@example.com'), trial })));
      const made = results.filter((r) => r.kind === 'created');
      expect(made).toHaveLength(1);
      const id = (made[0] as { account: { id: string; created: number } }).account.id;
      const state = (await s.store.getAccount(id))!;
      expect(state.balance).toBe(5_000);
      expect(state.packages).toHaveLength(1);
      expect(state.packages[0].expiresAt! - state.packages[0].created).toBe(14 * 86_400);
      expect(state.packages[0].expiresAt).toBeGreaterThanOrEqual(nowS() + 14 * 86_400 - 5);
      // The trial's grant id is taken: granting it again (a retried registration step) credits nothing.
      expect(await s.store.grantPackage(id, { tokens: 5_000, expiresAt: null }, { once: 'signup' })).toMatchObject({ kind: 'duplicate' });
      expect(await s.store.createAccount({ ...member('new@example.com'), trial })).toEqual({ kind: 'email_taken' });
      expect((await s.store.getAccount(id))!.balance).toBe(5_000);
      // Without a trial, and with one that never expires.
      const plain = await accountId(s.store, 'plain@example.com');
      expect((await s.store.getAccount(plain))!.packages).toEqual([]);
      const forever = await s.store.createAccount({ ...member('forever@example.com'), trial: { tokens: 10, validDays: null } });
      expect((await s.store.getAccount((forever as { account: { id: string } }).account.id))!.packages[0]).toMatchObject({
        expiresAt: null,
      });
    });

    // Not generated for the memory store: it checks the email before it makes anything.
    redisOnly('leaves nothing of an account whose email was taken: no hash, no trial package, no grant marker', async () => {
      const redis = s.redis!;
      const trial = { tokens: 5, validDays: null };
      const id = (await s.store.createAccount({ ...member('once@example.com'), trial })) as { account: { id: string } };
      expect(await s.store.createAccount({ ...member('once@example.com'), trial })).toEqual({ kind: 'email_taken' });
      const slots = (await redis.keys(`${s.prefix}{acc_*}:*`)).map((k) => k.slice(s.prefix!.length)).sort();
      expect(slots).toEqual([`{${id.account.id}}:a`, `{${id.account.id}}:g`, `{${id.account.id}}:p`]);
    });

    it('writes package.granted (source signup) for a trial beside account.created', async () => {
      s.store.wantEvents({ types: new Set(['account.created', 'package.granted']), lowBalance: { percent: 20 } });
      const created = await s.store.createAccount({ ...member('ev@example.com'), trial: { tokens: 7, validDays: null } });
      const id = (created as { account: { id: string } }).account.id;
      const events = await s.store.readEvents(id, 10);
      expect(events.map((e) => e.type)).toEqual(['account.created', 'package.granted']);
      expect(JSON.parse(events[1].data)).toMatchObject({ account_id: id, tokens: 7, expires_at: null, source: 'signup' });
    });

    it('lists accounts in creation order, page by page, and searches email and name', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await accountId(s.store, `user${i}@example.com`, i === 3 ? 'Grace Hopper' : `User ${i}`));
      expect((await s.store.listAccounts({ limit: 100 })).map((a) => a.id)).toEqual(ids);
      const first = await s.store.listAccounts({ limit: 2 });
      expect(first.map((a) => a.id)).toEqual(ids.slice(0, 2));
      expect((await s.store.listAccounts({ limit: 2, after: first[1].id })).map((a) => a.id)).toEqual(ids.slice(2, 4));
      expect((await s.store.listAccounts({ limit: 10, search: 'HOPPER' })).map((a) => a.id)).toEqual([ids[3]]);
      expect((await s.store.listAccounts({ limit: 10, search: 'user4@' })).map((a) => a.id)).toEqual([ids[4]]);
    });

    it('reads several accounts’ balances at once, in the order asked, undefined for an unknown id', async () => {
      const a = await accountId(s.store, 'a@example.com');
      const b = await accountId(s.store, 'b@example.com');
      await s.store.grantPackage(b, { tokens: 700, expiresAt: null });
      await s.store.reserve(reserveReq({ id: null, accountId: b }, 'req_b', { fixed: 100, allowance: 0 }));
      const states = await s.store.getAccounts([b, 'acc_missing', a]);
      expect(states.map((st) => st && { id: st.id, balance: st.balance, reserved: st.reserved, debt: st.debt })).toEqual([
        { id: b, balance: 600, reserved: 100, debt: 0 },
        undefined,
        { id: a, balance: 0, reserved: 0, debt: 0 },
      ]);
      expect(await s.store.getAccounts([])).toEqual([]);
    });

    it('updates name, role, status and password hash, and only of an existing account', async () => {
      const id = await accountId(s.store, 'ada@example.com');
      expect(await s.store.updateAccount(id, { name: 'Ada L.', role: 'admin', passwordHash: 'scrypt$new' })).toMatchObject({
        id,
        name: 'Ada L.',
        role: 'admin',
        status: 'active',
        passwordHash: 'scrypt$new',
        email: 'ada@example.com',
      });
      expect(await s.store.updateAccount(id, { status: 'disabled' })).toMatchObject({ status: 'disabled', name: 'Ada L.' });
      expect(await s.store.updateAccount('acc_missing', { name: 'x' })).toBeUndefined();
      expect(await s.store.listAccounts({ limit: 10 })).toHaveLength(1);
    });
  });

  describe('packages', () => {
    it('sums unexpired packages into the balance and ignores expired ones', async () => {
      const k = await keyWithTokens(s.store, 100);
      await s.store.grantPackage(k.accountId, { tokens: 50, expiresAt: nowS() + 3600 });
      await s.store.grantPackage(k.accountId, { tokens: 1000, expiresAt: nowS() - 1 });
      const state = await s.store.getKey(k.id);
      expect(state?.balance).toBe(150);
      expect(state?.packages).toHaveLength(3);
      expect(await s.store.grantPackage('acc_missing', { tokens: 5, expiresAt: null })).toEqual({ kind: 'account_not_found' });
    });
  });

  describe('grants', () => {
    it('credits a package once per idempotency id, however often and however concurrently it is retried', async () => {
      const id = await accountId(s.store, null);
      const results = await Promise.all(
        Array.from({ length: 20 }, () => s.store.grantPackage(id, { tokens: 500, expiresAt: null }, { once: 'code:abc' })),
      );
      const winners = results.filter((r) => r.kind === 'granted');
      expect(winners).toHaveLength(1);
      const pkg = (winners[0] as { package: { id: string } }).package;
      for (const r of results.filter((r) => r.kind !== 'granted')) expect(r).toMatchObject({ kind: 'duplicate', package: { id: pkg.id } });
      expect(await s.store.getAccount(id)).toMatchObject({ balance: 500 });
      // Another id credits; the same id on another account is that account's own.
      expect((await s.store.grantPackage(id, { tokens: 1, expiresAt: null }, { once: 'code:def' })).kind).toBe('granted');
      const other = await accountId(s.store, null);
      expect((await s.store.grantPackage(other, { tokens: 1, expiresAt: null }, { once: 'code:abc' })).kind).toBe('granted');
      expect(await s.store.getAccount(id)).toMatchObject({ balance: 501 });
    });

    it('a grant cannot push a balance past 2^53: refused whole, the balance stays exact and usable to the last token', async () => {
      const id = await accountId(s.store, null);
      for (let i = 0; i < 9; i++)
        expect((await s.store.grantPackage(id, { tokens: MAX_GRANT_TOKENS, expiresAt: null })).kind).toBe('granted');
      // 9e15 + 1e13 would be 2^53 + 2796807259009: refused, and the once-id stays free for a retry that fits.
      const over = await s.store.grantPackage(id, { tokens: 10_000_000_000_000, expiresAt: null }, { once: 'pay:1' });
      expect(over).toEqual({ kind: 'balance_limit' });
      expect(await s.store.getAccount(id)).toMatchObject({ balance: 9 * MAX_GRANT_TOKENS });
      const toTheTop = Number.MAX_SAFE_INTEGER - 9 * MAX_GRANT_TOKENS;
      expect((await s.store.grantPackage(id, { tokens: toTheTop, expiresAt: null }, { once: 'pay:1' })).kind).toBe('granted');
      expect(await s.store.grantPackage(id, { tokens: 1, expiresAt: null })).toEqual({ kind: 'balance_limit' });
      expect(await s.store.getAccount(id)).toMatchObject({ balance: Number.MAX_SAFE_INTEGER });
      // Every token of it is spendable, exactly.
      const ref = { id: null, accountId: id };
      expect(await s.store.reserve(reserveReq(ref, 'r1'))).toMatchObject({ kind: 'reserved', amount: 110 });
      expect(await s.store.settle(settlement(ref, 'r1', 11))).toMatchObject({ kind: 'settled' });
      expect(await s.store.getAccount(id)).toMatchObject({ balance: Number.MAX_SAFE_INTEGER - 11, reserved: 0 });
    });

    it.each([0, -1, 1.5, MAX_GRANT_TOKENS + 1, Number.MAX_SAFE_INTEGER + 2, Number.NaN])(
      'refuses a grant of %s tokens (not a whole number from 1 to MAX_GRANT_TOKENS), crediting nothing',
      async (tokens) => {
        const id = await accountId(s.store, null);
        expect(await s.store.grantPackage(id, { tokens, expiresAt: null })).toEqual({ kind: 'invalid_tokens' });
        expect(await s.store.getAccount(id)).toMatchObject({ balance: 0, packages: [] });
      },
    );
  });
});
