/** The ledger port (UsageLedger), one contract for both stores: filtered, and paged by cursor either way in time. */
import { randomUUID } from 'node:crypto';
import { itOnRedis, makeStore, keyWithTokens, storeKinds, type StoreUnderTest } from '../helpers/stores';
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

    it('reads back every request id as given and each record at the time it was settled', async () => {
      const k = await keyWithTokens(s.store, 10_000);
      const uuid = randomUUID();
      const before = Math.floor(Date.now() / 1000);
      for (const id of [uuid, 'not-a-uuid', uuid.toUpperCase().slice(0, 35) + 'Z']) await s.store.settle(settlement(k, id, 20));
      const after = Math.ceil(Date.now() / 1000);
      const records = await s.store.usage({ keyId: k.id, limit: 10 });
      expect(records.map((r) => r.requestId)).toEqual([uuid, 'not-a-uuid', uuid.toUpperCase().slice(0, 35) + 'Z']);
      for (const r of records) {
        expect(r.created).toBeGreaterThanOrEqual(before);
        expect(r.created).toBeLessThanOrEqual(after);
      }
    });

    // Redis keeps a ledger record per request, possibly forever: every byte counts (the ledger at scale, issue 29).
    itOnRedis(kind)(
      'keeps a UUID request id in 22 characters, the key id in 19, no created field, and reads records of the layout before',
      async () => {
        const k = await keyWithTokens(s.store, 10_000);
        const uuid = randomUUID();
        await s.store.settle(settlement(k, uuid, 20));
        const stream = `${s.prefix}{${k.accountId}}:u`;
        const [[cursor, flat]] = await s.redis!.xrange(stream, '-', '+');
        const fields = new Map<string, string>();
        for (let i = 0; i < flat.length; i += 2) fields.set(flat[i], flat[i + 1]);
        expect(fields.get('rid')).toHaveLength(22);
        expect(fields.has('request_id')).toBe(false);
        expect(k.id).toHaveLength(27);
        expect(fields.get('kid')).toHaveLength(19);
        expect(fields.has('key_id')).toBe(false);
        expect(fields.has('created')).toBe(false);
        // A record as the layout before wrote it: request_id as given, its own created.
        await s.redis!.xadd(
          stream,
          '*',
          'request_id',
          'old-1',
          'key_id',
          k.id,
          'model',
          'acme/a',
          'prompt_tokens',
          '1',
          'completion_tokens',
          '2',
          'charged_tokens',
          '3',
          'estimated',
          '0',
          'stream',
          '0',
          'status',
          '200',
          'created',
          '1700000000',
          'endpoint',
          'chat',
        );
        const [now, old] = await s.store.usage({ keyId: k.id, limit: 10 });
        expect(now).toMatchObject({ requestId: uuid, keyId: k.id, created: Math.floor(Number(cursor.split('-')[0]) / 1000) });
        expect(old).toMatchObject({ requestId: 'old-1', keyId: k.id, created: 1700000000, chargedTokens: 3 });
      },
    );

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
