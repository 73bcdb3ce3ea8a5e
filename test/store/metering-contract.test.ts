/**
 * The metering port (MeteringStore), one contract for both stores: who may reserve, what a reservation holds and how
 * it ends, every cap held under concurrency, and settlement exactly once.
 */
import { randomUUID } from 'node:crypto';
import { makeStore, keyWithTokens, newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { accountId, granted, nowS, reserveReq, settlement, sleep } from './contract-fixtures';

describe.each(storeKinds)('%s store: metering port', (kind) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });

  describe('who may reserve', () => {
    it('refuses reservations for unknown, revoked and expired keys', async () => {
      expect(await s.store.reserve(reserveReq({ id: 'key_missing', accountId: 'acc_missing' }, 'r0'))).toEqual({
        kind: 'invalid_key',
        reason: 'not_found',
      });
      const k = await keyWithTokens(s.store, 1000);
      expect(await s.store.revokeKey(k.id)).toBe(true);
      expect(await s.store.revokeKey('key_missing')).toBe(false);
      expect(await s.store.reserve(reserveReq(k, 'r1'))).toEqual({ kind: 'invalid_key', reason: 'revoked' });
      const expired = await keyWithTokens(s.store, 1000, { expiresAt: nowS() - 1 });
      expect(await s.store.reserve(reserveReq(expired, 'r2'))).toEqual({ kind: 'invalid_key', reason: 'expired' });
    });

    it('limits a key to its model list', async () => {
      const k = await keyWithTokens(s.store, 1000, { models: ['acme/m1'] });
      expect((await s.store.reserve(reserveReq(k, 'r1'))).kind).toBe('reserved');
      expect(await s.store.reserve(reserveReq(k, 'r2', { model: 'acme/m2' }))).toEqual({ kind: 'model_not_allowed' });
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

  describe('reserve', () => {
    it('reserves prompt plus allowance and holds it out of the balance', async () => {
      const k = await keyWithTokens(s.store, 1000);
      expect(await s.store.reserve(reserveReq(k, 'r1'))).toEqual({ kind: 'reserved', allowance: 100, amount: 110 });
      const state = await s.store.getKey(k.id);
      expect(state).toMatchObject({ balance: 890, reserved: 110 });
    });

    it('lowers the allowance to what the balance covers, per choice', async () => {
      const k = await keyWithTokens(s.store, 50);
      expect(await s.store.reserve(reserveReq(k, 'r1', { unit: 2 }))).toEqual({ kind: 'reserved', allowance: 20, amount: 50 });
    });

    it('refuses when the balance cannot cover the prompt plus one completion token', async () => {
      const k = await keyWithTokens(s.store, 10);
      expect(await s.store.reserve(reserveReq(k, 'r1'))).toEqual({ kind: 'insufficient_quota', available: 10, limitedBy: 'account' });
      expect((await s.store.getKey(k.id))!.reserved).toBe(0);
    });

    it('replaces a request’s reservation when it reserves again, and drops it when the second is refused', async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'r1', { fixed: 600, allowance: 100 }));
      expect(await s.store.getKey(k.id)).toMatchObject({ reserved: 700, balance: 300 });
      expect(await s.store.reserve(reserveReq(k, 'r1', { fixed: 50, allowance: 100 }))).toEqual({
        kind: 'reserved',
        allowance: 100,
        amount: 150,
      });
      expect(await s.store.getKey(k.id)).toMatchObject({ reserved: 150, balance: 850 });
      expect(await s.store.reserve(reserveReq(k, 'r1', { fixed: 2000 }))).toEqual({
        kind: 'insufficient_quota',
        available: 1000,
        limitedBy: 'account',
      });
      expect(await s.store.getKey(k.id)).toMatchObject({ reserved: 0, balance: 1000 });
    });

    it('gives a reservation back on release, once', async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'r1'));
      await s.store.release(k.accountId, 'r1');
      await s.store.release(k.accountId, 'r1');
      expect(await s.store.getKey(k.id)).toMatchObject({ balance: 1000, reserved: 0 });
    });

    it('returns a reservation to the balance when its lease runs out, unless renewed', async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'lapsing', { leaseMs: 150 }));
      await s.store.reserve(reserveReq(k, 'renewed', { leaseMs: 150 }));
      await sleep(80);
      expect(await s.store.renew(k.accountId, 'renewed', 400)).toBe(true);
      await sleep(150);
      const state = await s.store.getKey(k.id);
      expect(state).toMatchObject({ reserved: 110, balance: 890 });
      expect(await s.store.renew(k.accountId, 'lapsing', 400)).toBe(false);
    });

    it('never lets concurrent reservations exceed the balance', async () => {
      const k = await keyWithTokens(s.store, 1000);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => s.store.reserve(reserveReq(k, `r${i}`, { fixed: 0, allowance: 100 }))),
      );
      const amounts = results.map((r) => (r.kind === 'reserved' ? r.amount : 0));
      expect(amounts.reduce((a, b) => a + b, 0)).toBe(1000);
      expect(results.filter((r) => r.kind === 'reserved')).toHaveLength(10);
      expect((await s.store.getKey(k.id))!.balance).toBe(0);
    });
  });

  describe('caps', () => {
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

  describe('settle', () => {
    it('charges the actual usage, refunds the rest of the reservation and writes one ledger record', async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'r1'));
      expect(await s.store.settle(settlement(k, 'r1', 42, { promptTokens: 12, completionTokens: 30, stream: true }))).toEqual({
        kind: 'settled',
        balance: 958,
      });
      const state = await s.store.getKey(k.id);
      expect(state).toMatchObject({ balance: 958, reserved: 0 });
      expect(state!.usage).toEqual({
        requests: 1,
        promptTokens: 12,
        completionTokens: 30,
        cachedTokens: 0,
        reasoningTokens: 0,
        chargedTokens: 42,
      });
      const ledger = await s.store.usage({ keyId: k.id, limit: 100 });
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({
        requestId: 'r1',
        keyId: k.id,
        model: 'acme/m1',
        promptTokens: 12,
        completionTokens: 30,
        chargedTokens: 42,
        stream: true,
        estimated: false,
        status: 200,
      });
    });

    it("answers the account's balance after the charge: packages left, less debt and the other requests' reservations", async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'r1'));
      await s.store.reserve(reserveReq(k, 'other'));
      const { reserved } = (await s.store.getKey(k.id))!;
      const result = await s.store.settle(settlement(k, 'r1', 0));
      const after = await s.store.getKey(k.id);
      expect(result).toEqual({ kind: 'settled', balance: after!.balance });
      expect(after!.balance).toBe(1000 - after!.reserved);
      expect(after!.reserved).toBeLessThan(reserved);
      // Charged from the packages, with a debt owed and a third request's reservation open: the same figure again.
      await s.store.reserve(reserveReq(k, 'third'));
      const charged = await s.store.settle(settlement(k, 'other', 1100));
      const owing = await s.store.getKey(k.id);
      expect(owing).toMatchObject({ debt: 100 });
      expect(charged).toEqual({ kind: 'settled', balance: owing!.balance });
      expect(owing!.balance).toBe(-100 - owing!.reserved);
      expect(await s.store.settle(settlement(k, 'third', 5))).toEqual({ kind: 'settled', balance: -105 });
    });

    it('charges exactly once when a settle is retried', async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'r1'));
      const first = await s.store.settle(settlement(k, 'r1', 50));
      const again = await Promise.all([s.store.settle(settlement(k, 'r1', 50)), s.store.settle(settlement(k, 'r1', 50))]);
      expect([first, ...again]).toMatchObject([{ kind: 'settled' }, { kind: 'duplicate' }, { kind: 'duplicate' }]);
      expect((await s.store.getKey(k.id))!.balance).toBe(950);
      expect(await s.store.usage({ keyId: k.id, limit: 100 })).toHaveLength(1);
    });

    it('charges a UUID request id once, and tells request ids apart exactly (case, length)', async () => {
      const k = await keyWithTokens(s.store, 1000);
      const uuid = randomUUID();
      const ids = [uuid, uuid.toUpperCase(), 'sixteen-chars-id', '=sixteen-chars-id', uuid.replace(/-/g, '')];
      for (const id of ids) expect(await s.store.settle(settlement(k, id, 20))).toMatchObject({ kind: 'settled' });
      for (const id of ids) expect(await s.store.settle(settlement(k, id, 20))).toEqual({ kind: 'duplicate' });
      expect((await s.store.getKey(k.id))!.balance).toBe(1000 - 20 * ids.length);
    });

    it('still charges after the lease lapsed, and records a shortfall as debt paid by the next grant', async () => {
      const k = await keyWithTokens(s.store, 100);
      await s.store.reserve(reserveReq(k, 'r1', { leaseMs: 50 }));
      await sleep(80);
      expect(await s.store.settle(settlement(k, 'r1', 130))).toEqual({ kind: 'settled', balance: -30 });
      expect(await s.store.getKey(k.id)).toMatchObject({ balance: -30, debt: 30, reserved: 0 });
      expect(await s.store.reserve(reserveReq(k, 'r2'))).toEqual({ kind: 'insufficient_quota', available: -30, limitedBy: 'account' });
      const pkg = granted(await s.store.grantPackage(k.accountId, { tokens: 100, expiresAt: null }));
      expect(pkg).toMatchObject({ tokens: 100, remaining: 70 });
      expect(await s.store.getKey(k.id)).toMatchObject({ balance: 70, debt: 0 });
    });

    it('keeps ledger and balance in agreement: the charged sum equals the balance drop', async () => {
      const k = await keyWithTokens(s.store, 10_000);
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          await s.store.reserve(reserveReq(k, `r${i}`));
          await s.store.settle(settlement(k, `r${i}`, 11 + i));
        }),
      );
      const ledger = await s.store.usage({ keyId: k.id, limit: 1000 });
      const charged = ledger.reduce((a, r) => a + r.chargedTokens, 0);
      expect(ledger).toHaveLength(20);
      expect(10_000 - (await s.store.getKey(k.id))!.balance).toBe(charged);
    });

    it('drains the package that expires first, never-expiring last', async () => {
      const k = await keyWithTokens(s.store, 100);
      const soon = granted(await s.store.grantPackage(k.accountId, { tokens: 30, expiresAt: nowS() + 100 }));
      const later = granted(await s.store.grantPackage(k.accountId, { tokens: 30, expiresAt: nowS() + 1000 }));
      await s.store.settle(settlement(k, 'r1', 40));
      const pk = new Map((await s.store.getKey(k.id))!.packages.map((p) => [p.id, p.remaining]));
      expect(pk.get(soon.id)).toBe(0);
      expect(pk.get(later.id)).toBe(20);
      expect((await s.store.getKey(k.id))!.balance).toBe(120);
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
  });

  describe('requests without a key', () => {
    it('reserves and settles on the account alone, recorded without a key', async () => {
      const id = await accountId(s.store, null);
      await s.store.grantPackage(id, { tokens: 1000, expiresAt: null });
      const ref = { id: null, accountId: id };
      expect(await s.store.reserve(reserveReq(ref, 'r1'))).toEqual({ kind: 'reserved', allowance: 100, amount: 110 });
      expect(await s.store.renew(id, 'r1', 60_000)).toBe(true);
      expect(await s.store.settle(settlement(ref, 'r1', 40))).toMatchObject({ kind: 'settled' });
      expect(await s.store.settle(settlement(ref, 'r1', 40))).toEqual({ kind: 'duplicate' });
      expect(await s.store.getAccount(id)).toMatchObject({ balance: 960, reserved: 0 });
      expect(await s.store.usage({ accountId: id, limit: 10 })).toMatchObject([{ requestId: 'r1', accountId: id, keyId: null }]);
      expect(await s.store.reserve(reserveReq({ id: null, accountId: 'acc_missing' }, 'r2'))).toEqual({ kind: 'account_not_found' });
    });
  });
});
