/**
 * balance.low's threshold, one contract for both stores: the account's own, else LOW_BALANCE_TOKENS when set, else
 * LOW_BALANCE_PERCENT of the account's last grant; none for an account never granted anything. Written once per
 * crossing below it at a settlement, never by a grant or a new key, and again only after the balance is back at or
 * above it.
 */
import { itOnRedis, makeStore, newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { generateKey } from '../../src/http/keys';
import type { LowBalanceDefault } from '../../src/store/records/events';
import { settlement } from './contract-fixtures';

describe.each(storeKinds)('%s store: balance.low', (kind) => {
  let s: StoreUnderTest;
  let n = 0;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });

  /** Tells the store to write balance.low alone, with these defaults (LOW_BALANCE_TOKENS unset, 20 %: the configured defaults). */
  const want = (lowBalance: LowBalanceDefault = { percent: 20 }) => s.store.wantEvents({ types: new Set(['balance.low']), lowBalance });

  /** Charges `tokens` to the account (a settlement without a key). */
  const spend = (accountId: string, tokens: number) => s.store.settle(settlement({ id: null, accountId }, `req_${++n}`, tokens));

  const grant = (accountId: string, tokens: number) => s.store.grantPackage(accountId, { tokens, expiresAt: null });

  /** The balance.low events written for the account, as their data. */
  const lows = async (accountId: string) =>
    (await s.store.readEvents(accountId, 100)).filter((e) => e.type === 'balance.low').map((e) => JSON.parse(e.data) as unknown);

  const low = (accountId: string, balance: number, threshold: number) => ({ account_id: accountId, balance, threshold });

  it('a 500-token grant: 20 % of it (100) is the threshold, so spending to 150 writes nothing and to 99 writes one', async () => {
    want();
    const id = await newAccount(s.store);
    await grant(id, 500);
    await spend(id, 350); // 150
    expect(await lows(id)).toEqual([]);
    await spend(id, 50); // 100: not below
    expect(await lows(id)).toEqual([]);
    await spend(id, 1); // 99
    await spend(id, 20); // 79: still below, notified already
    expect(await lows(id)).toEqual([low(id, 99, 100)]);
  });

  it('a large grant: the threshold is 20 % of it', async () => {
    want();
    const id = await newAccount(s.store);
    await grant(id, 1_000_000);
    await spend(id, 800_000); // 200,000: not below
    expect(await lows(id)).toEqual([]);
    await spend(id, 11); // 199,989
    expect(await lows(id)).toEqual([low(id, 199_989, 200_000)]);
  });

  it("the last grant's size counts, not the largest or the sum", async () => {
    want();
    const id = await newAccount(s.store);
    await grant(id, 10_000);
    await grant(id, 100); // threshold 20
    await spend(id, 10_080); // 20
    expect(await lows(id)).toEqual([]);
    await spend(id, 10); // 10
    expect(await lows(id)).toEqual([low(id, 10, 20)]);
  });

  it('a trial package is a grant: the threshold is 20 % of it, and making the account writes nothing', async () => {
    want();
    const made = await s.store.createAccount({
      email: null,
      name: 'trial',
      passwordHash: null,
      role: 'member',
      status: 'active',
      trial: { tokens: 500, validDays: null },
    });
    if (made.kind !== 'created') throw new Error(made.kind);
    const id = made.account.id;
    await spend(id, 400); // 100
    expect(await lows(id)).toEqual([]);
    await spend(id, 10); // 90
    expect(await lows(id)).toEqual([low(id, 90, 100)]);
  });

  it("the account's own threshold overrides the default, above or below it; 'default' (null) brings it back", async () => {
    want();
    const id = await newAccount(s.store);
    await grant(id, 500);
    expect(await s.store.setLowBalance(id, 300)).toBe(true);
    await spend(id, 200); // 300: not below
    expect(await lows(id)).toEqual([]);
    await spend(id, 10); // 290
    expect(await lows(id)).toEqual([low(id, 290, 300)]);

    const other = await newAccount(s.store);
    await grant(other, 500);
    expect(await s.store.setLowBalance(other, 50)).toBe(true);
    await spend(other, 410); // 90: below 20 %, above its own 50
    expect(await lows(other)).toEqual([]);
    expect(await s.store.setLowBalance(other, null)).toBe(true);
    await spend(other, 1); // 89, against 20 % of 500 again
    expect(await lows(other)).toEqual([low(other, 89, 100)]);
  });

  it("LOW_BALANCE_TOKENS, when set, is every account's threshold instead of the percent; an own threshold still wins", async () => {
    want({ tokens: 1_000, percent: 20 });
    const id = await newAccount(s.store);
    await grant(id, 100_000);
    await spend(id, 98_900); // 1,100: far below 20 %, above 1,000
    expect(await lows(id)).toEqual([]);
    await spend(id, 101); // 999
    expect(await lows(id)).toEqual([low(id, 999, 1_000)]);

    const own = await newAccount(s.store);
    await grant(own, 5_000);
    await s.store.setLowBalance(own, 100);
    await spend(own, 4_800); // 200: below 1,000, above its own 100
    expect(await lows(own)).toEqual([]);
  });

  it('a grant never writes balance.low, even one that leaves the balance below the threshold; the next settlement does', async () => {
    want({ tokens: 1_000, percent: 20 });
    const id = await newAccount(s.store);
    await grant(id, 500); // 500, below 1,000
    expect(await lows(id)).toEqual([]);
    await spend(id, 10); // 490
    expect(await lows(id)).toEqual([low(id, 490, 1_000)]);
    await grant(id, 100); // 590: still below, re-arms nothing, writes nothing
    await spend(id, 10); // 580: notified already
    expect(await lows(id)).toEqual([low(id, 490, 1_000)]);
  });

  it('an account never granted anything, with no threshold of its own, has none: no key, no debt writes balance.low', async () => {
    want();
    const id = await newAccount(s.store);
    const k = generateKey();
    const made = await s.store.createKey(id, { hash: k.hash, prefix: k.prefix, name: 'k', expiresAt: null, models: null });
    expect(made.kind).toBe('created');
    await spend(id, 50); // debt: -50
    expect(await lows(id)).toEqual([]);
    // Its own threshold makes one: the next settlement below it writes it.
    await s.store.setLowBalance(id, 10);
    await spend(id, 10); // -60
    expect(await lows(id)).toEqual([low(id, -60, 10)]);
  });

  itOnRedis(kind)("an account granted before the last grant was kept (no lg): its newest package's tokens stand for it", async () => {
    want();
    const id = await newAccount(s.store);
    await grant(id, 500);
    const redis = s.redis as NonNullable<StoreUnderTest['redis']>;
    const hash = `${s.prefix}{${id}}:a`;
    expect(await redis.hget(hash, 'lg')).toBe('500');
    await redis.hdel(hash, 'lg');
    await spend(id, 401); // 99: below 20 % of 500
    expect(await lows(id)).toEqual([low(id, 99, 100)]);
  });

  it('crossing back above the threshold (a grant) arms it again; the new grant sets the new threshold', async () => {
    want();
    const id = await newAccount(s.store);
    await grant(id, 500);
    await spend(id, 401); // 99: below 100
    await grant(id, 1_000); // 1,099: above 200, re-armed, nothing written
    expect(await lows(id)).toEqual([low(id, 99, 100)]);
    await spend(id, 899); // 200: not below
    expect(await lows(id)).toEqual([low(id, 99, 100)]);
    await spend(id, 50); // 150
    expect(await lows(id)).toEqual([low(id, 99, 100), low(id, 150, 200)]);
  });
});
