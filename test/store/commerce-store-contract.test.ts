/** One contract, two commerce stores: MemoryCommerceStore and RedisCommerceStore (on a real redis-server) behave the same. */
import { makeCommerceStore, type Under } from '../helpers/console-stores';
import { itOnRedis, storeKinds } from '../helpers/stores';
import type { CommerceStore } from '../../src/store/ports/commerce-store';
import { CHECKOUT_RECORD_DAYS, type NewProduct, type NewRedemptionCode } from '../../src/store/records/commerce';

const nowS = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const starter: NewProduct = { id: 'starter', name: 'Starter', tokens: 100_000, validDays: 30, price: 500, currency: 'usd', active: true };
const code = (hash: string, over: Partial<NewRedemptionCode> = {}): NewRedemptionCode => ({
  hash,
  productId: null,
  tokens: 1000,
  validDays: null,
  expiresAt: null,
  ...over,
});

describe.each(storeKinds)('%s commerce store', (kind) => {
  const redisOnly = itOnRedis(kind);
  let s: Under<CommerceStore>;
  beforeEach(async () => {
    s = await makeCommerceStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });

  describe('products', () => {
    it('creates, reads and lists products; an id is taken only once', async () => {
      const created = await s.store.createProduct(starter);
      expect(created).toMatchObject({ kind: 'created', product: { ...starter } });
      expect(await s.store.createProduct({ ...starter, name: 'Other' })).toEqual({ kind: 'id_taken' });
      await s.store.createProduct({ ...starter, id: 'pro', validDays: null, active: false });
      expect(await s.store.getProduct('starter')).toMatchObject(starter);
      expect(await s.store.getProduct('nope')).toBeUndefined();
      const all = await s.store.listProducts();
      expect(all.map((p) => p.id)).toEqual(['starter', 'pro']);
      expect(all[1]).toMatchObject({ validDays: null, active: false });
    });

    it('updates only the fields given, and never creates a product', async () => {
      await s.store.createProduct(starter);
      expect(await s.store.updateProduct('starter', { active: false, price: 900, validDays: null })).toMatchObject({
        ...starter,
        active: false,
        price: 900,
        validDays: null,
      });
      expect(await s.store.getProduct('starter')).toMatchObject({ name: 'Starter', active: false, price: 900, validDays: null });
      expect(await s.store.updateProduct('ghost', { active: true })).toBeUndefined();
      expect(await s.store.getProduct('ghost')).toBeUndefined();
    });
  });

  describe('redemption codes', () => {
    it('creates codes that list without their hash, unredeemed', async () => {
      const made = await s.store.createCodes([code('h1', { productId: 'starter', validDays: 30 }), code('h2')]);
      expect(made).toHaveLength(2);
      const listed = await s.store.listCodes();
      expect(listed.map((c) => c.id).sort()).toEqual(made.map((c) => c.id).sort());
      for (const c of listed) {
        expect(c).not.toHaveProperty('hash');
        expect(c).toMatchObject({ redeemedBy: null, redeemedAt: null, credited: false });
      }
      expect(listed.find((c) => c.id === made[0].id)).toMatchObject({ productId: 'starter', tokens: 1000, validDays: 30 });
    });

    it('a code is claimed once: unknown, used and expired codes are told apart', async () => {
      const [c] = await s.store.createCodes([code('h1')]);
      const first = await s.store.claimCode('h1', 'acc_a');
      expect(first).toMatchObject({ kind: 'claimed', resumed: false, code: { id: c.id, redeemedBy: 'acc_a', tokens: 1000 } });
      expect(await s.store.claimCode('h1', 'acc_b')).toEqual({ kind: 'used' });
      expect(await s.store.claimCode('nope', 'acc_a')).toEqual({ kind: 'unknown' });

      await s.store.createCodes([code('old', { expiresAt: nowS() + 1 })]);
      await sleep(2100);
      expect(await s.store.claimCode('old', 'acc_a')).toEqual({ kind: 'expired' });
    });

    it('the claiming account gets its code back until the credit is marked, then never again', async () => {
      const [c] = await s.store.createCodes([code('h1')]);
      await s.store.claimCode('h1', 'acc_a');
      // A crash after the claim, before the credit: the same account's retry resumes it; nobody else can take it.
      expect(await s.store.claimCode('h1', 'acc_b')).toEqual({ kind: 'used' });
      expect(await s.store.claimCode('h1', 'acc_a')).toMatchObject({ kind: 'claimed', resumed: true, code: { id: c.id } });
      await s.store.markCredited(c.id);
      expect(await s.store.claimCode('h1', 'acc_a')).toEqual({ kind: 'used' });
      const [listed] = await s.store.listCodes();
      expect(listed).toMatchObject({ redeemedBy: 'acc_a', credited: true });
      expect(listed.redeemedAt).toBeGreaterThan(0);
    });

    it('of 50 accounts claiming one code at once, exactly one wins', async () => {
      await s.store.createCodes([code('hot')]);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => s.store.claimCode('hot', `acc_${i}`)));
      expect(results.filter((r) => r.kind === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'used')).toHaveLength(49);
    });

    it('marking an unclaimed code credited changes nothing', async () => {
      const [c] = await s.store.createCodes([code('h1')]);
      await s.store.markCredited(c.id);
      expect(await s.store.claimCode('h1', 'acc_a')).toMatchObject({ kind: 'claimed', resumed: false });
    });

    // Not generated for the memory store: it holds what it is given by construction.
    redisOnly('stores no code, only its hash, and each code under a tag of its own', async () => {
      const redis = s.redis!;
      const [c] = await s.store.createCodes([code('abc123')]);
      const keys = await redis.keys(`${s.prefix}*`);
      expect(keys.sort()).toEqual([`${s.prefix}rch:abc123`, `${s.prefix}rcs`, `${s.prefix}{${c.id}}:rc`].sort());
    });
  });

  describe('checkouts', () => {
    it('finds a Checkout Session it recorded, with what was sold, and nothing for any other id', async () => {
      const sold = {
        sessionId: 'cs_test_1',
        accountId: 'acc_a',
        productId: 'starter',
        tokens: 100_000,
        validDays: 30,
        amount: 500,
        currency: 'usd',
      };
      await s.store.recordCheckout(sold);
      await s.store.recordCheckout({ ...sold, sessionId: 'cs_test_2', validDays: null });
      expect(await s.store.getCheckout('cs_test_1')).toEqual({ ...sold, created: expect.any(Number) });
      expect((await s.store.getCheckout('cs_test_1'))!.created).toBeGreaterThanOrEqual(nowS() - 5);
      expect(await s.store.getCheckout('cs_test_2')).toMatchObject({ validDays: null });
      expect(await s.store.getCheckout('cs_live_made_elsewhere')).toBeUndefined();
    });

    // Not generated for the memory store: it lives no longer than its process.
    redisOnly('keeps a checkout’s record for CHECKOUT_RECORD_DAYS in Redis, then lets it go', async () => {
      const redis = s.redis!;
      await s.store.recordCheckout({
        sessionId: 'cs_ttl',
        accountId: 'a',
        productId: 'p',
        tokens: 1,
        validDays: null,
        amount: 1,
        currency: 'usd',
      });
      const ttl = await redis.ttl(`${s.prefix}co:cs_ttl`);
      expect(ttl).toBeGreaterThan(CHECKOUT_RECORD_DAYS * 86_400 - 60);
      expect(ttl).toBeLessThanOrEqual(CHECKOUT_RECORD_DAYS * 86_400);
    });
  });
});
