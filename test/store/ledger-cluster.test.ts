/**
 * On Redis Cluster (three masters, accounts spread over the slots): the settle step's hour-bucket markers, the rollup
 * follower's step and the rollups' pipelined read, and the shipper's Redis side (pending, lease, cursor and trim, backlog) each
 * touch one account's slot only, so they run there unchanged.
 */
import { Cluster } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store';
import { RedisShipSource } from '../../src/store/redis/redis-ship-source';
import { DAY_SECONDS } from '../../src/store/records/rollups';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster';
import { keyWithTokens } from '../helpers/stores';
import { nowS, settlement } from './contract-fixtures';
import { eventually } from '../helpers/eventually';

describe('the ledger on Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let store: RedisStore;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster([cluster.url]);
    store = new RedisStore(client, { prefix: 'lc:' });
  }, 30_000);
  afterAll(async () => {
    await store.close();
    await cluster.stop();
  });

  it('settles once, rolls up per day, and ships per account, on every slot', async () => {
    const keys = [];
    for (let i = 0; i < 4; i++) keys.push(await keyWithTokens(store, 10_000));
    for (const k of keys) {
      expect(await store.settle(settlement(k, 'r1', 20))).toMatchObject({ kind: 'settled' });
      expect(await store.settle(settlement(k, 'r1', 20))).toEqual({ kind: 'duplicate' });
      await store.settle(settlement(k, 'r2', 30));
    }
    const day = Math.floor(nowS() / DAY_SECONDS);
    await eventually(
      async () => {
        const all = await store.daily({ sinceDay: day, untilDay: day });
        expect(all.rows.filter((r) => r.by === 'model')).toMatchObject([{ name: 'acme/m1', requests: 8, chargedTokens: 200 }]);
      },
      5_000,
      'the rollup follower',
    );
    const one = await store.daily({ accountId: keys[0].accountId, sinceDay: day - 6, untilDay: day });
    expect(one.rows.find((r) => r.by === 'model')).toMatchObject({ requests: 2, chargedTokens: 50 });

    const source = new RedisShipSource(client, 'lc:');
    for (const k of keys) {
      const A = k.accountId;
      expect(await source.pending(A)).toBe(true);
      expect(await source.lease(A, 'me', 10_000)).toBe(true);
      const records = await source.read(A, await source.shipped(A), 100);
      expect(records.map((r) => r.requestId)).toEqual(['r1', 'r2']);
      expect(await source.backlog(A)).toMatchObject({ records: 2 });
      expect(await source.advance(A, 'me', records[1].cursor, 2, Date.now())).toBe(true);
      expect(await source.pending(A)).toBe(false);
      expect(await source.backlog(A)).toEqual({ records: 0, oldestMs: null });
      expect(await client.xlen(`lc:{${A}}:u`)).toBe(0);
    }
  }, 30_000);
});
