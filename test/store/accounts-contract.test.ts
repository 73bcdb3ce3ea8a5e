/** The accounts half of the store contract, run on both stores: accounts, their keys and caps, idempotent grants. */
import { makeStore, keyWithTokens, newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { ReserveRequest, Settlement } from '../../src/store/records/metering';
import type { Store } from '../../src/store/ports/store';

type Key = { id: string | null; accountId: string };

const reserveReq = (key: Key, requestId: string, over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  accountId: key.accountId,
  keyId: key.id,
  requestId,
  model: 'acme/m1',
  fixed: 10,
  unit: 1,
  allowance: 100,
  leaseMs: 60_000,
  ...over,
});

const settlement = (key: Key, requestId: string, charged: number): Settlement => ({
  accountId: key.accountId,
  keyId: key.id,
  requestId,
  model: 'acme/m1',
  promptTokens: 10,
  completionTokens: charged - 10,
  chargedTokens: charged,
  estimated: false,
  stream: false,
  status: 200,
});

const member = (email: string | null, name = 'Ada') =>
  ({ email, name, passwordHash: email ? 'scrypt$stub' : null, role: 'member', status: 'active' }) as const;

async function accountId(store: Store, email: string | null, name?: string): Promise<string> {
  const created = await store.createAccount(member(email, name));
  if (created.kind !== 'created') throw new Error(created.kind);
  return created.account.id;
}

describe.each(storeKinds)('%s store: accounts', (kind) => {
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

    it('refuses every key of a disabled account at once, and serves them again when re-enabled', async () => {
      const id = await accountId(s.store, null);
      await s.store.grantPackage(id, { tokens: 1000, expiresAt: null });
      const a = await keyWithTokens(s.store, 0, { accountId: id });
      const b = await keyWithTokens(s.store, 0, { accountId: id });
      await s.store.updateAccount(id, { status: 'disabled' });
      expect(await s.store.reserve(reserveReq(a, 'r1'))).toEqual({ kind: 'account_disabled' });
      expect(await s.store.reserve(reserveReq(b, 'r2'))).toEqual({ kind: 'account_disabled' });
      expect(await s.store.reserve(reserveReq({ id: null, accountId: id }, 'r3'))).toEqual({ kind: 'account_disabled' });
      await s.store.updateAccount(id, { status: 'active' });
      expect((await s.store.reserve(reserveReq(a, 'r4'))).kind).toBe('reserved');
    });
  });

  describe('keys of an account', () => {
    it('lists an account’s keys only, and refuses a key presented with another account', async () => {
      const one = await keyWithTokens(s.store, 100);
      const two = await keyWithTokens(s.store, 100, { accountId: one.accountId });
      const other = await keyWithTokens(s.store, 100);
      expect((await s.store.listKeys(one.accountId)).map((k) => k.id)).toEqual([one.id, two.id]);
      expect((await s.store.listKeys()).map((k) => k.id)).toEqual(expect.arrayContaining([one.id, two.id, other.id]));
      expect(await s.store.listKeys('acc_missing')).toEqual([]);
      // A key reserves only on its own account's balance.
      expect(await s.store.reserve(reserveReq({ id: one.id, accountId: other.accountId }, 'r1'))).toEqual({
        kind: 'invalid_key',
        reason: 'not_found',
      });
      expect(await s.store.createKey('acc_missing', { hash: 'h', prefix: 'p', name: '', expiresAt: null, models: null })).toBeUndefined();
      expect(await s.store.findKeyId('h')).toBeUndefined();
    });

    it('spends the account’s balance from every key, and records the key on the ledger and in its own totals', async () => {
      const one = await keyWithTokens(s.store, 1000);
      const two = await keyWithTokens(s.store, 0, { accountId: one.accountId });
      await s.store.settle(settlement(one, 'r1', 100));
      await s.store.settle(settlement(two, 'r2', 50));
      expect(await s.store.getAccount(one.accountId)).toMatchObject({ balance: 850, usage: { requests: 2, chargedTokens: 150 } });
      expect(await s.store.getKey(two.id)).toMatchObject({ balance: 850, spentTokens: 50, usage: { requests: 1, chargedTokens: 50 } });
      expect((await s.store.getKey(two.id))!.lastUsed).toBeGreaterThan(0);
      const ledger = await s.store.usage({ accountId: one.accountId, limit: 10 });
      expect(ledger.map((r) => [r.requestId, r.accountId, r.keyId])).toEqual([
        ['r1', one.accountId, one.id],
        ['r2', one.accountId, two.id],
      ]);
      expect((await s.store.usage({ keyId: two.id, limit: 10 })).map((r) => r.requestId)).toEqual(['r2']);
      expect((await s.store.usage({ accountId: one.accountId, keyId: one.id, limit: 10 })).map((r) => r.requestId)).toEqual(['r1']);
    });

    it('holds a key to its cap: spent plus reserved never passes it, and the key shows what its account offers it', async () => {
      const k = await keyWithTokens(s.store, 10_000, { limitTokens: 300 });
      expect(await s.store.getKey(k.id)).toMatchObject({ balance: 300, limitTokens: 300 });
      expect(await s.store.reserve(reserveReq(k, 'r1', { allowance: 1000 }))).toEqual({ kind: 'reserved', allowance: 290, amount: 300 });
      expect(await s.store.reserve(reserveReq(k, 'r2'))).toEqual({ kind: 'insufficient_quota', available: 0, limitedBy: 'key' });
      await s.store.settle(settlement(k, 'r1', 120));
      expect(await s.store.getKey(k.id)).toMatchObject({ balance: 180, spentTokens: 120, reserved: 0 });
      expect(await s.store.getAccount(k.accountId)).toMatchObject({ balance: 9880 });
      // The account's balance limits too, when it is the smaller.
      const poor = await keyWithTokens(s.store, 50, { limitTokens: 300 });
      expect(await s.store.getKey(poor.id)).toMatchObject({ balance: 50 });
      expect(await s.store.reserve(reserveReq(poor, 'r3', { fixed: 100 }))).toEqual({
        kind: 'insufficient_quota',
        available: 50,
        limitedBy: 'account',
      });
    });

    it('never lets concurrent reservations on three keys pass the account’s balance nor any key’s cap', async () => {
      const accountId = await newAccount(s.store);
      await s.store.grantPackage(accountId, { tokens: 1000, expiresAt: null });
      const keys = [
        await keyWithTokens(s.store, 0, { accountId, limitTokens: 200 }),
        await keyWithTokens(s.store, 0, { accountId, limitTokens: 500 }),
        await keyWithTokens(s.store, 0, { accountId }),
      ];
      const results = await Promise.all(
        Array.from({ length: 90 }, (_, i) => s.store.reserve(reserveReq(keys[i % 3], `r${i}`, { fixed: 0, allowance: 50 }))),
      );
      const held = [0, 0, 0];
      results.forEach((r, i) => (held[i % 3] += r.kind === 'reserved' ? r.amount : 0));
      expect(held[0]).toBeLessThanOrEqual(200);
      expect(held[1]).toBeLessThanOrEqual(500);
      expect(held.reduce((a, b) => a + b, 0)).toBe(1000);
      expect(await s.store.getAccount(accountId)).toMatchObject({ balance: 0, reserved: 1000 });
      // A lapsed lease gives back to the key as well as to the account.
      for (let i = 0; i < 90; i++) await s.store.release(accountId, `r${i}`);
      expect(await s.store.getKey(keys[0].id)).toMatchObject({ reserved: 0, balance: 200 });
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
  });

  describe('requests without a key', () => {
    it('reserves and settles on the account alone, recorded without a key', async () => {
      const id = await accountId(s.store, null);
      await s.store.grantPackage(id, { tokens: 1000, expiresAt: null });
      const ref = { id: null, accountId: id };
      expect(await s.store.reserve(reserveReq(ref, 'r1'))).toEqual({ kind: 'reserved', allowance: 100, amount: 110 });
      expect(await s.store.renew(id, 'r1', 60_000)).toBe(true);
      expect(await s.store.settle(settlement(ref, 'r1', 40))).toBe('settled');
      expect(await s.store.settle(settlement(ref, 'r1', 40))).toBe('duplicate');
      expect(await s.store.getAccount(id)).toMatchObject({ balance: 960, reserved: 0 });
      expect(await s.store.usage({ accountId: id, limit: 10 })).toMatchObject([{ requestId: 'r1', accountId: id, keyId: null }]);
      expect(await s.store.reserve(reserveReq({ id: null, accountId: 'acc_missing' }, 'r2'))).toEqual({ kind: 'account_not_found' });
    });
  });
});
