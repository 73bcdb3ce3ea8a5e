/**
 * One contract, three response-owner stores: MemoryResponseOwners, RedisResponseOwners (on a real redis-server) and,
 * with the archive, Redis' day buckets composed with PostgreSQL (a real server; each step of the clock ships the days
 * that ended into it): they record a stored answer's response and item ids as one account's, keep them 30 days at
 * least, and forget a response.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { archivedOwners } from '../../src/ledger-archive/archived-owners';
import { PgLedgerArchive } from '../../src/ledger-archive/ledger-archive';
import { PgOwnersArchive } from '../../src/ledger-archive/owners-archive';
import { OwnersShipper } from '../../src/ledger-archive/owners-shipper';
import { createLogger } from '../../src/observability/logger';
import { MemoryResponseOwners } from '../../src/store/memory/memory-response-owners';
import { RedisOwnerShipSource } from '../../src/store/redis/redis-owner-ship-source';
import { RedisResponseOwners, shardOf } from '../../src/store/redis/redis-response-owners';
import type { ResponseOwners } from '../../src/store/ports/response-owners';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { testRedisUrl } from '../helpers/stores';

const DAY = 24 * 3600 * 1000;
const answer = { accountId: 'acc_a', model: 'acme/m', tokens: 42, responseId: 'resp_1', itemIds: ['ws_1', 'msg_1'] };

describe.each(['memory', 'redis', 'archived'] as const)('%s response owners', (kind) => {
  let now = Date.now();
  let redis: Redis | undefined;
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  let owners: ResponseOwners;
  let pg: PostgresServer | undefined;
  let ledger: PgLedgerArchive | undefined;
  let shipper: OwnersShipper | undefined;
  beforeAll(async () => {
    if (kind !== 'archived') return;
    pg = await startPostgresServer();
    ledger = await PgLedgerArchive.open(pg.url);
  }, 30_000);
  afterAll(async () => {
    await ledger?.close();
    await pg?.destroy();
  });
  beforeEach(async () => {
    now = Date.now(); // Redis expires keys by its own clock: the test clock starts at it
    redis = kind === 'memory' ? undefined : new Redis(testRedisUrl());
    const clock = () => now;
    if (kind === 'memory') owners = new MemoryResponseOwners(clock);
    else if (kind === 'redis') owners = new RedisResponseOwners(redis!, { prefix, now: clock });
    else {
      await ledger!.pool.query('TRUNCATE response_owners');
      const archive = new PgOwnersArchive(ledger!);
      const live = new RedisResponseOwners(redis!, { prefix, now: clock, archived: { hotMs: 48 * 3600_000 } });
      owners = archivedOwners(live, archive, { logger: createLogger('silent'), failed: () => {}, now: clock });
      const source = new RedisOwnerShipSource(redis!, prefix);
      shipper = new OwnersShipper({ source, archive, hotHours: 48, logger: createLogger('silent'), now: clock });
    }
  });
  afterEach(async () => {
    if (!redis) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  /** Time passes; with the archive, the days that ended are shipped. */
  const later = async (ms: number) => {
    now += ms;
    await shipper?.pass();
  };

  /** The accounts of `ids`, as `items` answers them (their sizes aside). */
  const accounts = async (ids: string[]) => (await owners.items(ids)).map((o) => o && o.accountId);

  it("records a stored answer's response and items as the account's, each with its size; ids never recorded have no owner", async () => {
    await owners.record(answer);
    expect(await owners.get('resp_1')).toEqual({ accountId: 'acc_a', model: 'acme/m', tokens: 42 });
    expect(await owners.get('ws_1')).toBeUndefined();
    const a = { accountId: 'acc_a', tokens: 42 };
    expect(await owners.items(['msg_1', 'resp_1', 'msg_other', 'ws_1'])).toEqual([a, a, undefined, a]);
    // Shipped to PostgreSQL (where there is one) and read back from it, the size stays beside the owner.
    await later(3 * DAY);
    expect(await owners.items(['msg_1'])).toEqual([a]);
    await owners.record({ ...answer, tokens: undefined, responseId: 'resp_2', itemIds: ['msg_2'] });
    expect(await owners.items(['msg_2'])).toEqual([{ accountId: 'acc_a', tokens: undefined }]);
    expect(await owners.get('resp_other')).toBeUndefined();
  });

  it('keeps owners at least 30 days, and not past 40', async () => {
    await owners.record({ ...answer, tokens: undefined });
    await later(30 * DAY - 1000);
    expect(await owners.get('resp_1')).toEqual({ accountId: 'acc_a', model: 'acme/m', tokens: undefined });
    expect(await accounts(['ws_1'])).toEqual(['acc_a']);
    await later(10 * DAY + 1000);
    expect(await owners.get('resp_1')).toBeUndefined();
    expect(await accounts(['ws_1'])).toEqual([undefined]);
  });

  it('forgets a deleted response, and a response recorded again is found in its newer place', async () => {
    await owners.record(answer);
    await later(15 * DAY);
    await owners.record({ ...answer, tokens: 99, itemIds: [] });
    expect(await owners.get('resp_1')).toMatchObject({ tokens: 99 });
    await owners.forget('resp_1');
    expect(await owners.get('resp_1')).toBeUndefined();
    expect(await accounts(['msg_1'])).toEqual(['acc_a']);
  });

  it('records an answer whose items fill one hash past what one Lua call can unpack (8,000 values): all of them', async () => {
    // 5,000 ids of one shard: 10,000 values for one hash, written in parts.
    const itemIds: string[] = [];
    for (let i = 0; itemIds.length < 5_000; i++) if (shardOf(`msg_${i}`) === 3) itemIds.push(`msg_${i}`);
    await owners.record({ ...answer, itemIds });
    const found = await owners.items(itemIds);
    expect(found.filter((o) => o?.accountId === 'acc_a' && o.tokens === 42)).toHaveLength(itemIds.length);
  });

  if (kind !== 'memory') {
    it('keeps no key per answer: ids share a few hashes, each with its expiry; owners of the one-key layout still read', async () => {
      for (let i = 0; i < 50; i++) await owners.record({ ...answer, responseId: `resp_${i}`, itemIds: [`msg_${i}`] });
      const keys = await redis!.keys(`${prefix}*`);
      expect(keys.length).toBeLessThanOrEqual(16);
      for (const key of keys) expect(await redis!.ttl(key)).toBeGreaterThan(30 * 24 * 3600 - 60);
      await redis!.set(`${prefix}resp:resp_old`, JSON.stringify({ a: 'acc_b', m: 'acme/m', t: null }), 'EX', 60);
      expect(await owners.get('resp_old')).toEqual({ accountId: 'acc_b', model: 'acme/m', tokens: undefined });
    });
  }

  if (kind === 'archived') {
    it('reads the owners recorded in 10-day buckets before the archive was on, until they expire', async () => {
      await new RedisResponseOwners(redis!, { prefix, now: () => now }).record(answer);
      expect(await owners.get('resp_1')).toMatchObject({ accountId: 'acc_a' });
      expect(await accounts(['msg_1'])).toEqual(['acc_a']);
    });
  }
});
