/**
 * The upgrade from the layout before accounts: a store the old version wrote (its own scripts, frozen in
 * test/helpers/legacy-store.ts) keeps every balance, debt, reservation, settle marker and ledger record, and two
 * processes migrating at once end in the same state as one.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import { LegacyStore } from '../helpers/legacy-store';
import { testRedisUrl } from '../helpers/stores';
import type { Settlement } from '../../src/store/records/metering';

const settled = (keyId: string, requestId: string, charged: number): Settlement => ({
  accountId: keyId,
  keyId,
  requestId,
  model: 'acme/m1',
  promptTokens: 1,
  completionTokens: charged - 1,
  chargedTokens: charged,
  estimated: false,
  stream: false,
  status: 200,
});

describe('RedisStore.migrate on a store written before accounts', () => {
  const prefix = `mig${randomBytes(4).toString('hex')}:`;
  const raw = new Redis(testRedisUrl());
  const clients: Redis[] = [];
  const newStore = () => {
    const client = new Redis(testRedisUrl(), { ...redisClientOptions(2000), enableOfflineQueue: true });
    clients.push(client);
    return new RedisStore(client, { prefix });
  };
  const legacy = new LegacyStore(raw, prefix);
  let rich: string, indebted: string, revoked: string, restricted: string;

  beforeAll(async () => {
    rich = await legacy.createKey('hash-rich', 'rich');
    await legacy.grant(rich, 1000);
    await legacy.grant(rich, 500, Math.floor(Date.now() / 1000) + 3600);
    for (const [id, charged] of [
      ['r1', 100],
      ['r2', 200],
      ['r3', 50],
    ] as const) {
      await legacy.reserve(rich, id, 10, 500);
      await legacy.settle(rich, { requestId: id, charged, prompt: 1, completion: charged - 1, model: 'acme/m1' });
    }
    // In flight at the upgrade: 10 + 90 held.
    expect(await legacy.reserve(rich, 'open', 10, 90)).toEqual(['ok', 90, 100]);

    indebted = await legacy.createKey('hash-indebted', 'indebted');
    await legacy.grant(indebted, 100);
    await legacy.settle(indebted, { requestId: 'd1', charged: 130, prompt: 1, completion: 129, model: 'acme/m1' });

    revoked = await legacy.createKey('hash-revoked', 'revoked');
    await legacy.grant(revoked, 100);
    await legacy.revoke(revoked);

    restricted = await legacy.createKey('hash-restricted', 'restricted', ['acme/m1']);
    await legacy.grant(restricted, 100);
  });

  afterAll(async () => {
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length) await raw.del(...keys);
    raw.disconnect();
    for (const c of clients) c.disconnect();
  });

  it('migrates every key exactly once when two processes start together, then does nothing', async () => {
    const counts = await Promise.all([newStore().migrate(), newStore().migrate()]);
    expect(counts[0] + counts[1]).toBe(4);
    expect(await newStore().migrate()).toBe(0);
    expect(await raw.get(`${prefix}schema`)).toBe('2');
    // The old key hashes are gone: an old process still running would find its keys unknown, not serve them.
    expect(await raw.exists(`${prefix}{${rich}}:k`)).toBe(0);
  });

  it('keeps balance, reservation, totals and ledger: each key is the only key of an account with its id', async () => {
    const store = newStore();
    expect(await store.findKeyId('hash-rich')).toEqual({ keyId: rich, accountId: rich });
    expect(await store.getAccount(rich)).toMatchObject({
      id: rich,
      email: null,
      name: 'rich',
      status: 'active',
      balance: 1500 - 350 - 100,
      reserved: 100,
      debt: 0,
      usage: { requests: 3, chargedTokens: 350 },
    });
    // Both packages survive; two granted in the same millisecond have no defined order between them.
    expect((await store.getAccount(rich))!.packages.map((p) => p.tokens).sort((a, b) => a - b)).toEqual([500, 1000]);
    expect(await store.getKey(rich)).toMatchObject({ accountId: rich, spentTokens: 350, reserved: 100, balance: 1050, limitTokens: null });
    expect((await store.getKey(rich))!.lastUsed).toBeGreaterThan(0);
    expect((await store.listKeys(rich)).map((k) => k.id)).toEqual([rich]);
    const ledger = await store.usage({ accountId: rich, limit: 10 });
    expect(ledger.map((r) => [r.requestId, r.accountId, r.keyId, r.chargedTokens])).toEqual([
      ['r1', rich, rich, 100],
      ['r2', rich, rich, 200],
      ['r3', rich, rich, 50],
    ]);
    expect((await store.usage({ keyId: rich, limit: 10 })).map((r) => r.requestId)).toEqual(['r1', 'r2', 'r3']);
    expect((await store.listAccounts({ limit: 10 })).map((a) => a.id).sort()).toEqual([rich, indebted, revoked, restricted].sort());
  });

  it('settles the reservation in flight at the upgrade once, and still refuses settlements made before it', async () => {
    const store = newStore();
    expect(await store.settle(settled(rich, 'r2', 200))).toEqual({ kind: 'duplicate' });
    expect(await store.settle(settled(rich, 'open', 60))).toMatchObject({ kind: 'settled' });
    expect(await store.getAccount(rich)).toMatchObject({ balance: 1500 - 350 - 60, reserved: 0 });
    expect(await store.getKey(rich)).toMatchObject({ reserved: 0, spentTokens: 410 });
  });

  it('keeps debt, revocation and model lists', async () => {
    const store = newStore();
    expect(await store.getAccount(indebted)).toMatchObject({ balance: -30, debt: 30 });
    const grant = await store.grantPackage(indebted, { tokens: 100, expiresAt: null });
    expect(grant).toMatchObject({ kind: 'granted', package: { remaining: 70 } });
    const req = { requestId: 'x', model: 'acme/m2', fixed: 1, unit: 1, allowance: 1, leaseMs: 1000 };
    expect(await store.reserve({ ...req, accountId: revoked, keyId: revoked })).toEqual({ kind: 'invalid_key', reason: 'revoked' });
    expect(await store.reserve({ ...req, accountId: restricted, keyId: restricted })).toEqual({ kind: 'model_not_allowed' });
    expect((await store.reserve({ ...req, model: 'acme/m1', accountId: restricted, keyId: restricted })).kind).toBe('reserved');
  });
});
