/**
 * The daily totals the console's chart and the operator read: from the store's rollups, and, for a host's store
 * without them, summed from its ledger; the same rows either way.
 */
import { dailyModelTotals } from '../../src/metering/daily-totals';
import { MemoryStore } from '../../src/store/memory/memory-store';
import { keyWithTokens } from '../helpers/stores';
import { settlement } from '../store/contract-fixtures';

describe('daily totals', () => {
  it('are the same from rollups and, for a store without them, from the ledger', async () => {
    const store = new MemoryStore();
    const k = await keyWithTokens(store, 10_000);
    await store.settle(settlement(k, 'r1', 20));
    await store.settle(settlement(k, 'r2', 30, { model: 'acme/m2', cachedTokens: 3 }));
    const now = Math.floor(Date.now() / 1000);
    const fromRollups = await dailyModelTotals(store, k.accountId, 7, now);
    const ledgerOnly = { usage: store.usage.bind(store) };
    expect(await dailyModelTotals(ledgerOnly, k.accountId, 7, now)).toEqual(fromRollups);
    expect(fromRollups.map((r) => [r.name, r.requests, r.chargedTokens, r.cachedTokens])).toEqual([
      ['acme/m1', 1, 20, 0],
      ['acme/m2', 1, 30, 3],
    ]);
  });
});
