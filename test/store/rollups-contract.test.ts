/**
 * The daily rollups kept beside the ledger (the UsageLedger port's `daily`), one contract for both stores: per UTC
 * day, model and key, equal to the ledger's sums, a duplicate counted nowhere, every account summed for the operator.
 * The memory store adds a settlement in its step; Redis's rollup follower after it, within about a second.
 */
import { DAY_SECONDS } from '../../src/store/records/rollups';
import { eventually } from '../helpers/eventually';
import { makeStore, keyWithTokens, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { nowS, settlement } from './contract-fixtures';

describe.each(storeKinds)('%s store: daily rollups', (kind) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });
  const today = () => Math.floor(nowS() / DAY_SECONDS);
  const totals = (requests: number, charged: number, cached = 0) => ({
    requests,
    promptTokens: 10 * requests,
    completionTokens: charged - 10 * requests,
    cachedTokens: cached,
    reasoningTokens: 0,
    chargedTokens: charged,
  });

  it('sums today per model and per key, and counts a retried settlement nowhere', async () => {
    const k = await keyWithTokens(s.store, 10_000);
    await s.store.settle(settlement(k, 'r1', 20));
    await s.store.settle(settlement(k, 'r2', 30, { cachedTokens: 4 }));
    await s.store.settle(settlement(k, 'r3', 50, { model: 'acme/m2' }));
    await s.store.settle(settlement({ id: null, accountId: k.accountId }, 'r4', 40));
    expect(await s.store.settle(settlement(k, 'r1', 20))).toEqual({ kind: 'duplicate' });
    const day = today();
    const read = await eventually(
      async () => {
        const got = await s.store.daily!({ accountId: k.accountId, sinceDay: day - 29, untilDay: day });
        expect(got.rows).toEqual([
          { day, by: 'model', name: 'acme/m1', ...totals(3, 90, 4) },
          { day, by: 'model', name: 'acme/m2', ...totals(1, 50) },
          { day, by: 'key', name: k.id, ...totals(3, 100, 4) },
        ]);
        return got;
      },
      5_000,
      'the rollups to hold the settlements',
    );
    expect(read.from).toBeLessThanOrEqual(day - 29);
    expect((await s.store.daily!({ accountId: k.accountId, sinceDay: day - 3, untilDay: day - 1 })).rows).toEqual([]);
  });

  it("sums every account's rollups for the operator", async () => {
    const a = await keyWithTokens(s.store, 10_000);
    const b = await keyWithTokens(s.store, 10_000);
    await s.store.settle(settlement(a, 'r1', 20));
    await s.store.settle(settlement(b, 'r1', 30));
    const day = today();
    await eventually(
      async () => {
        const { rows } = await s.store.daily!({ sinceDay: day, untilDay: day });
        expect(rows.filter((r) => r.by === 'model')).toEqual([{ day, by: 'model', name: 'acme/m1', ...totals(2, 50) }]);
      },
      5_000,
      "every account's rollups",
    );
  });
});
