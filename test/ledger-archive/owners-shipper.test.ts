/**
 * Stored responses' owners with the archive, against a real PostgreSQL (started by the test) and the test
 * redis-server: a past day's owners are shipped into PostgreSQL, and only then do their Redis hashes expire with the
 * hot window; ids then resolve from PostgreSQL, never for another account; PostgreSQL down shortens nothing and fails
 * closed on a miss; an id landing in a day while it is shipped is never dropped unshipped; and Redis keeps ≤ 16 bytes
 * per answer once the hot window has passed.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { archivedOwners } from '../../src/ledger-archive/archived-owners';
import { PgLedgerArchive } from '../../src/ledger-archive/ledger-archive';
import { PgOwnersArchive } from '../../src/ledger-archive/owners-archive';
import { OwnersShipper, type OwnersShipperOptions } from '../../src/ledger-archive/owners-shipper';
import { openLedgerArchive } from '../../src/ledger-archive/open-ledger-archive';
import { createLogger } from '../../src/observability/logger';
import { Metrics } from '../../src/observability/metrics';
import { createStores } from '../../src/store/create-store';
import { callerResponse } from '../../src/proxy/caller-ids';
import type { OwnerShipSource } from '../../src/store/ports/owner-ship-source';
import { RedisOwnerShipSource } from '../../src/store/redis/redis-owner-ship-source';
import { dayKey, RedisResponseOwners } from '../../src/store/redis/redis-response-owners';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { testRedisUrl } from '../helpers/stores';

const DAY = 86_400_000;
const HOT = 48 * 3600_000;
/** Less than any unshipped hash of the last 3 days has left: its 30 days after its day. */
const LONG = 26 * DAY;
const hex = (n: number) => randomBytes(n).toString('hex');

describe('the response owners shipper', () => {
  let pg: PostgresServer;
  let ledger: PgLedgerArchive;
  let archive: PgOwnersArchive;
  let redis: Redis;
  let prefix: string;
  beforeAll(async () => {
    pg = await startPostgresServer();
    ledger = await PgLedgerArchive.open(pg.url);
    archive = new PgOwnersArchive(ledger);
    redis = new Redis(testRedisUrl());
  }, 30_000);
  afterAll(async () => {
    await ledger.close();
    await pg.destroy();
    redis.disconnect();
  });
  beforeEach(async () => {
    prefix = `ow${hex(4)}:`;
    await ledger.pool.query('TRUNCATE response_owners');
  });
  afterEach(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  });

  const source = () => new RedisOwnerShipSource(redis, prefix);
  const shipper = (over: Partial<OwnersShipperOptions> = {}) =>
    new OwnersShipper({ source: source(), archive, hotHours: 48, logger: createLogger('silent'), batch: 100, ...over });
  /** Answers recorded `daysAgo` days back, by account: OpenAI-like ids, a reasoning and a message item each. */
  async function recorded(daysAgo: number, accountId: string, n: number) {
    const owners = new RedisResponseOwners(redis, { prefix, now: () => Date.now() - daysAgo * DAY, archived: { hotMs: HOT } });
    const answers = Array.from({ length: n }, () => ({
      accountId,
      model: 'acme/gpt-4o-mini',
      tokens: 1234,
      responseId: `resp_${hex(24)}`,
      itemIds: [`rs_${hex(24)}`, `msg_${hex(24)}`],
    }));
    for (let i = 0; i < n; i += 100) await Promise.all(answers.slice(i, i + 100).map((a) => owners.record(a)));
    return answers;
  }
  const reader = (failed: () => void = () => {}) =>
    archivedOwners(new RedisResponseOwners(redis, { prefix, archived: { hotMs: HOT } }), archive, {
      logger: createLogger('silent'),
      failed,
    });
  const ownerKeys = () => redis.keys(`${prefix}own:*`);
  const ttls = async () => Promise.all((await ownerKeys()).map((k) => redis.pttl(k)));
  const rows = async () => Number((await ledger.pool.query<{ n: string }>('SELECT count(*) AS n FROM response_owners')).rows[0].n);
  const today = () => Math.floor(Date.now() / DAY);

  it('ships a past day into PostgreSQL, then shortens its hashes to the hot window (day end + 48 h), and moves the shipped day', async () => {
    await recorded(2, 'acc_a', 200);
    expect(Math.min(...(await ttls()))).toBeGreaterThan(LONG);
    await shipper().pass();
    expect(await rows()).toBe(600);
    const end = (today() - 1) * DAY + HOT;
    for (const ttl of await ttls()) expect(Math.abs(Date.now() + ttl - end)).toBeLessThan(5_000);
    expect(await source().shipped()).toBeGreaterThanOrEqual(today() - 2); // yesterday too, 10 min after midnight
  });

  it('resolves the ids from PostgreSQL once their Redis hashes are gone, and never for another account', async () => {
    const [a] = await recorded(3, 'acc_a', 50);
    await recorded(3, 'acc_b', 50);
    await shipper().pass();
    expect(await ownerKeys()).toEqual([]); // day end + 48 h has passed: gone from Redis
    const owners = reader();
    expect(await owners.get(a.responseId)).toEqual({ accountId: 'acc_a', model: 'acme/gpt-4o-mini', tokens: 1234 });
    expect(await owners.get(a.itemIds[0])).toBeUndefined();
    const a1234 = { accountId: 'acc_a', tokens: 1234 };
    expect(await owners.items([a.itemIds[1], a.responseId, 'msg_never'])).toEqual([a1234, a1234, undefined]);
    expect(await callerResponse(owners, 'acc_a', a.responseId)).toMatchObject({ accountId: 'acc_a' });
    expect(await callerResponse(owners, 'acc_b', a.responseId)).toBeUndefined();
    // A deleted response is forgotten in PostgreSQL too; its items stay the account's.
    await owners.forget(a.responseId);
    expect(await owners.get(a.responseId)).toBeUndefined();
    expect(await owners.items([a.itemIds[1]])).toEqual([a1234]);
  });

  it('shortens nothing while PostgreSQL is down; lookups in Redis go on, a miss is refused as unknown and counted', async () => {
    const [a] = await recorded(3, 'acc_a', 30);
    let failures = 0;
    const owners = reader(() => failures++);
    const one = shipper();
    await pg.stop();
    try {
      await expect(one.pass()).rejects.toThrow();
      expect(Math.min(...(await ttls()))).toBeGreaterThan(LONG);
      expect(await source().shipped()).toBe(today() - 4); // the days before, empty, needed nothing of PostgreSQL
      expect(await owners.get(a.responseId)).toMatchObject({ accountId: 'acc_a' }); // unshipped: Redis has it
      expect(await owners.items([a.itemIds[0], 'rs_not_in_redis'])).toEqual([{ accountId: 'acc_a', tokens: 1234 }, null]);
      expect(await owners.get('resp_not_in_redis')).toBeUndefined();
      expect(failures).toBe(2);
    } finally {
      await pg.start();
    }
    await one.pass();
    expect(await rows()).toBe(90);
    expect(await ownerKeys()).toEqual([]);
  }, 30_000);

  it('ships a shard again rather than shorten it when PostgreSQL committed but the shipper died before shortening', async () => {
    await recorded(2, 'acc_a', 100);
    const day = today() - 2;
    const real = source();
    const dying: OwnerShipSource = Object.assign(Object.create(real) as OwnerShipSource, {
      shorten: (d: number, shard: number, n: number, at: number) =>
        d === day ? Promise.reject(new Error('killed after the commit')) : real.shorten(d, shard, n, at),
    });
    await expect(shipper({ source: dying, leaseMs: 200 }).pass()).rejects.toThrow('killed');
    expect(await rows()).toBeGreaterThan(0);
    expect(Math.min(...(await ttls()))).toBeGreaterThan(LONG);
    expect(await real.shipped()).toBe(day - 1);
    await new Promise((r) => setTimeout(r, 250)); // the dead shipper's lease runs out
    await shipper().pass();
    expect(await rows()).toBe(300);
    expect(Math.max(...(await ttls()))).toBeLessThan(2 * DAY);
  });

  it('never drops an id that lands in a day while it is shipped: that hash keeps its 30 days until shipped again', async () => {
    await recorded(2, 'acc_a', 20);
    const day = today() - 2;
    const real = source();
    let late: number | undefined;
    const racing: OwnerShipSource = Object.assign(Object.create(real) as OwnerShipSource, {
      scan: async (d: number, shard: number, cursor: string, count: number) => {
        const page = await real.scan(d, shard, cursor, count);
        if (d === day && late === undefined && page.rows.length > 0) {
          late = shard;
          await redis.hset(dayKey(prefix, shard, d), 'msg_late', 'acc_a');
        }
        return page;
      },
    });
    const one = shipper({ source: racing });
    await one.pass();
    expect(await redis.hget(dayKey(prefix, late!, day), 'msg_late')).toBe('acc_a');
    expect(await redis.pttl(dayKey(prefix, late!, day))).toBeGreaterThan(LONG);
    expect(await real.shipped()).toBe(day - 1);
    await one.pass();
    expect(await real.shipped()).toBeGreaterThanOrEqual(day);
    expect(await redis.pttl(dayKey(prefix, late!, day))).toBeLessThan(2 * DAY);
    expect(await reader().items(['msg_late'])).toEqual([{ accountId: 'acc_a', tokens: undefined }]);
  });

  it('lets one shipper ship at a time', async () => {
    await recorded(3, 'acc_a', 10);
    expect(await source().lease('first', 10_000)).toBe(true);
    await shipper().pass();
    expect(await rows()).toBe(0);
    expect(await source().advance('second', today())).toBe(false);
    expect(await source().shipped()).toBeUndefined();
  });

  it('is wired so with LEDGER_DATABASE_URL: owners recorded by day, and read from PostgreSQL when Redis lacks them', async () => {
    const logger = createLogger('silent');
    const config = { ledgerDatabaseUrl: pg.url, ledgerHotHours: 48, ledgerRetentionMonths: undefined, ledgerTrimAfterDays: undefined };
    const client = new Redis(testRedisUrl());
    const storeConfig = {
      ...config,
      redisUrl: undefined,
      redisPrefix: prefix,
      redisCluster: false,
      storeTimeoutMs: 2000,
      rateLimitWindowSeconds: 60,
    };
    const stores = createStores(storeConfig, logger, { redis: client });
    const opened = openLedgerArchive(config, stores, logger, new Metrics({ processMetrics: false }));
    try {
      const owners = opened.owners(stores.responses);
      await owners.record({ accountId: 'acc_a', model: 'acme/m', tokens: 1, responseId: 'resp_today', itemIds: [] });
      const keys = await ownerKeys();
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(new RegExp(`:d${today()}$`));
      await archive.store([{ id: 'resp_pg', day: today() - 5, accountId: 'acc_b', model: 'acme/m', tokens: null }]);
      expect(await owners.get('resp_pg')).toEqual({ accountId: 'acc_b', model: 'acme/m', tokens: undefined });
      expect(await owners.get('resp_today')).toMatchObject({ accountId: 'acc_a' });
    } finally {
      await opened.close();
      await stores.close();
      client.disconnect();
    }
  });

  it('keeps at most 16 bytes per answer in Redis once the hot window has passed', async () => {
    const n = 2_000;
    await recorded(3, 'acc_a', n);
    const bytes = async () => {
      let sum = 0;
      for (const key of await redis.keys(`${prefix}*`)) sum += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      return sum;
    };
    const before = await bytes();
    const one = shipper();
    await one.pass();
    await one.stop();
    const after = await bytes();
    expect(before / n).toBeGreaterThan(100); // what the answers cost while Redis held them (240 B when measured)
    expect(after / n).toBeLessThanOrEqual(16);
  });
});
