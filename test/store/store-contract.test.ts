/** One contract, two stores: MemoryStore and RedisStore (on a real redis-server) must behave the same. */
import { makeStore, keyWithTokens, newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { GrantResult } from '../../src/store/records/account';
import type { ReserveRequest, Settlement, UsageQuery } from '../../src/store/records/metering';
import type { TokenPackage } from '../../src/store/records/common';

/** A key as the helpers return it: its id and its account's. */
type Key = { id: string; accountId: string };

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

const settlement = (key: Key, requestId: string, charged: number, over: Partial<Settlement> = {}): Settlement => ({
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
  ...over,
});

/** The package a grant credited; fails the test when it credited none. */
function granted(result: GrantResult): TokenPackage {
  if (result.kind !== 'granted') throw new Error(`expected a grant, got ${result.kind}`);
  return result.package;
}

const nowS = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(storeKinds)('%s store', (kind) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });

  describe('keys', () => {
    it('finds a key and its account by its hash and keeps name, prefix, expiry, model list and cap', async () => {
      const expires = nowS() + 100;
      const accountId = await newAccount(s.store);
      const made = await s.store.createKey(accountId, {
        hash: 'h1',
        prefix: 'sk-abc',
        name: 'n',
        expiresAt: expires,
        models: ['a/b', 'c/d'],
        limitTokens: 500,
      });
      const rec = made!;
      expect(await s.store.findKeyId('h1')).toEqual({ keyId: rec.id, accountId });
      expect(await s.store.findKeyId('nope')).toBeUndefined();
      const state = await s.store.getKey(rec.id);
      expect(state).toMatchObject({
        id: rec.id,
        accountId,
        limitTokens: 500,
        spentTokens: 0,
        lastUsed: null,
        name: 'n',
        prefix: 'sk-abc',
        expiresAt: expires,
        models: ['a/b', 'c/d'],
        revokedAt: null,
        balance: 0,
      });
      expect((await s.store.listKeys()).map((k) => k.id)).toContain(rec.id);
    });

    it('never stores the secret: only what createKey was given', async () => {
      if (!s.redis) return; // the memory store holds only the NewKey fields by construction
      const { id, secret } = await keyWithTokens(s.store, 10);
      const keys = await s.redis.keys(`${s.prefix}*`);
      for (const k of keys) {
        const type = await s.redis.type(k);
        const dump = type === 'hash' ? JSON.stringify(await s.redis.hgetall(k)) : type === 'string' ? await s.redis.get(k) : '';
        expect(`${k} ${dump}`).not.toContain(secret);
        expect(`${k} ${dump}`).not.toContain(secret.slice(3));
      }
      expect(id).toMatch(/^key_/);
    });

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

  describe('settle', () => {
    it('charges the actual usage, refunds the rest of the reservation and writes one ledger record', async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'r1'));
      expect(await s.store.settle(settlement(k, 'r1', 42, { promptTokens: 12, completionTokens: 30, stream: true }))).toBe('settled');
      const state = await s.store.getKey(k.id);
      expect(state).toMatchObject({ balance: 958, reserved: 0 });
      expect(state!.usage).toEqual({ requests: 1, promptTokens: 12, completionTokens: 30, chargedTokens: 42 });
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

    it('charges exactly once when a settle is retried', async () => {
      const k = await keyWithTokens(s.store, 1000);
      await s.store.reserve(reserveReq(k, 'r1'));
      const first = await s.store.settle(settlement(k, 'r1', 50));
      const again = await Promise.all([s.store.settle(settlement(k, 'r1', 50)), s.store.settle(settlement(k, 'r1', 50))]);
      expect([first, ...again]).toEqual(['settled', 'duplicate', 'duplicate']);
      expect((await s.store.getKey(k.id))!.balance).toBe(950);
      expect(await s.store.usage({ keyId: k.id, limit: 100 })).toHaveLength(1);
    });

    it('still charges after the lease lapsed, and records a shortfall as debt paid by the next grant', async () => {
      const k = await keyWithTokens(s.store, 100);
      await s.store.reserve(reserveReq(k, 'r1', { leaseMs: 50 }));
      await sleep(80);
      await s.store.settle(settlement(k, 'r1', 130));
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
  });

  describe('usage ledger', () => {
    it('filters by model and reads on incrementally after a cursor, newest last', async () => {
      const k = await keyWithTokens(s.store, 10_000);
      for (let i = 0; i < 5; i++) await s.store.settle(settlement(k, `r${i}`, 20, { model: i % 2 ? 'acme/b' : 'acme/a' }));
      const all = await s.store.usage({ keyId: k.id, limit: 100 });
      expect(all.map((r) => r.requestId)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
      expect((await s.store.usage({ keyId: k.id, model: 'acme/b', limit: 100 })).map((r) => r.requestId)).toEqual(['r1', 'r3']);
      expect((await s.store.usage({ keyId: k.id, after: all[2].cursor, limit: 100 })).map((r) => r.requestId)).toEqual(['r3', 'r4']);
      expect((await s.store.usage({ keyId: k.id, limit: 2 })).map((r) => r.requestId)).toEqual(['r3', 'r4']);
      // Reading on from a cursor pages forward, so a reader never skips records.
      expect((await s.store.usage({ keyId: k.id, after: all[0].cursor, limit: 2 })).map((r) => r.requestId)).toEqual(['r1', 'r2']);
      expect((await s.store.usage({ keyId: k.id, model: 'acme/a', limit: 1 })).map((r) => r.requestId)).toEqual(['r4']);
    });

    it('pages back in time before a cursor: the newest `limit` records strictly before it, oldest first', async () => {
      const k = await keyWithTokens(s.store, 10_000);
      for (let i = 0; i < 5; i++) await s.store.settle(settlement(k, `r${i}`, 20, { model: i % 2 ? 'acme/b' : 'acme/a' }));
      const all = await s.store.usage({ keyId: k.id, limit: 100 });
      const ids = async (q: Partial<UsageQuery>) => (await s.store.usage({ keyId: k.id, limit: 100, ...q })).map((r) => r.requestId);
      expect(await ids({ before: all[3].cursor, limit: 2 })).toEqual(['r1', 'r2']);
      expect(await ids({ before: all[1].cursor, limit: 2 })).toEqual(['r0']);
      expect(await ids({ before: all[0].cursor })).toEqual([]);
      expect(await ids({ before: all[4].cursor, model: 'acme/a', limit: 1 })).toEqual(['r2']);
      // Both cursors: the records between them, the oldest `limit` (reading forward).
      expect(await ids({ after: all[0].cursor, before: all[4].cursor, limit: 2 })).toEqual(['r1', 'r2']);
      // A cursor and a time bound together: the tighter one holds on each side.
      const last = all[4].created;
      expect(await ids({ before: all[2].cursor, until: last })).toEqual(['r0', 'r1']);
      expect(await ids({ before: all[4].cursor, until: all[0].created - 1 })).toEqual([]);
      expect(await ids({ after: all[2].cursor, since: 0 })).toEqual(['r3', 'r4']);
      expect(await ids({ after: all[0].cursor, since: last + 1 })).toEqual([]);
    });
  });
});
