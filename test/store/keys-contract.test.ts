/** The key-lookup and key ports (KeyLookup, KeyStore), one contract for both stores: found by hash, never the secret. */
import { makeStore, keyWithTokens, newAccount, itOnRedis, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { reserveReq, nowS } from './contract-fixtures';

describe.each(storeKinds)('%s store: key ports', (kind) => {
  const redisOnly = itOnRedis(kind);
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });

  describe('key lookup', () => {
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
      if (made.kind !== 'created') throw new Error(made.kind);
      const rec = made.key;
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

    // Not generated for the memory store: it holds only the NewKey fields by construction.
    redisOnly('never stores the secret: only what createKey was given', async () => {
      const redis = s.redis!;
      const { id, secret } = await keyWithTokens(s.store, 10);
      const keys = await redis.keys(`${s.prefix}*`);
      for (const k of keys) {
        const type = await redis.type(k);
        const dump = type === 'hash' ? JSON.stringify(await redis.hgetall(k)) : type === 'string' ? await redis.get(k) : '';
        expect(`${k} ${dump}`).not.toContain(secret);
        expect(`${k} ${dump}`).not.toContain(secret.slice(3));
      }
      expect(id).toMatch(/^key_/);
    });
  });

  describe('keys', () => {
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
      expect(await s.store.createKey('acc_missing', { hash: 'h', prefix: 'p', name: '', expiresAt: null, models: null })).toEqual({
        kind: 'account_not_found',
      });
      expect(await s.store.findKeyId('h')).toBeUndefined();
    });

    it('an account cannot create more keys than its limit, not even all at once; revoked keys still count', async () => {
      const id = await newAccount(s.store);
      const newKey = (i: number) => ({ hash: `h${i}`, prefix: 'p', name: `k${i}`, expiresAt: null, models: null, maxKeys: 5 });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.store.createKey(id, newKey(i))));
      const made = results.filter((r) => r.kind === 'created');
      expect(made).toHaveLength(5);
      for (const r of results.filter((r) => r.kind !== 'created')) expect(r).toEqual({ kind: 'key_limit', maxKeys: 5 });
      expect(await s.store.listKeys(id)).toHaveLength(5);
      // A refused key is not findable by its hash.
      const refusedHashes = results.flatMap((r, i) => (r.kind === 'created' ? [] : [`h${i}`]));
      for (const h of refusedHashes) expect(await s.store.findKeyId(h)).toBeUndefined();
      await s.store.revokeKey((made[0] as { key: { id: string } }).key.id);
      expect(await s.store.createKey(id, newKey(99))).toEqual({ kind: 'key_limit', maxKeys: 5 });
      // Without maxKeys the store sets no limit (the host's own code decides).
      expect((await s.store.createKey(id, { ...newKey(100), maxKeys: undefined })).kind).toBe('created');
    });
  });
});
