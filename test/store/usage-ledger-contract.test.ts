/** The ledger port (UsageLedger), one contract for both stores: filtered, and paged by cursor either way in time. */
import { makeStore, keyWithTokens, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { UsageQuery } from '../../src/store/records/metering';
import { settlement } from './contract-fixtures';

describe.each(storeKinds)('%s store: usage ledger port', (kind) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
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

    it('keeps the hosted tool line on a record only when it has calls, as both stores write it', async () => {
      const k = await keyWithTokens(s.store, 10_000);
      await s.store.settle(settlement(k, 'tools', 520, { toolCalls: 2, toolTokens: 400 }));
      await s.store.settle(settlement(k, 'none', 20, { toolCalls: 0, toolTokens: 0 }));
      await s.store.settle(settlement(k, 'plain', 20));
      const [tools, none, plain] = await s.store.usage({ keyId: k.id, limit: 10 });
      expect(tools).toMatchObject({ requestId: 'tools', toolCalls: 2, toolTokens: 400, chargedTokens: 520 });
      for (const r of [none, plain]) {
        expect(r).not.toHaveProperty('toolCalls');
        expect(r).not.toHaveProperty('toolTokens');
      }
      expect(await s.store.getKey(k.id)).toMatchObject({ balance: 10_000 - 560 });
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
