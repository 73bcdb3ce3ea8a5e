/**
 * The ledger shipper against a real PostgreSQL (started by the test) and the test redis-server: every record in
 * PostgreSQL exactly once, summing to the balances' drop; Redis trimmed behind the shipped cursor, never ahead of it;
 * a batch shipped again after a crash between PostgreSQL's commit and the cursor's move stored once; PostgreSQL down
 * keeps everything in Redis, counted on the backlog, and shipped when it is back; one shipper per account; retention
 * drops whole months.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ConfigError, createTokenmeter } from '../../src/index';
import { archivedUsage } from '../../src/ledger-archive/archived-ledger';
import { PgLedgerArchive } from '../../src/ledger-archive/ledger-archive';
import { LedgerShipper, type ShipperOptions } from '../../src/ledger-archive/shipper';
import { createLogger } from '../../src/observability/logger';
import { Metrics } from '../../src/observability/metrics';
import type { ShipSource } from '../../src/store/ports/ship-source';
import { RedisShipSource } from '../../src/store/redis/redis-ship-source';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { RedisStore } from '../../src/store/redis/redis-store';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { settlement } from '../store/contract-fixtures';

describe('the ledger shipper', () => {
  let pg: PostgresServer;
  let s: StoreUnderTest;
  let db: Client;
  let archive: PgLedgerArchive;
  beforeAll(async () => {
    pg = await startPostgresServer();
  }, 30_000);
  afterAll(async () => {
    await pg.destroy();
  });
  beforeEach(async () => {
    s = await makeStore('redis');
    db = new Client({ connectionString: pg.url });
    await db.connect();
    await db.query('DROP TABLE IF EXISTS usage_records, response_owners, tokenmeter_ledger_schema CASCADE');
    await db.end();
    archive = await PgLedgerArchive.open(pg.url);
  });
  afterEach(async () => {
    await archive.close().catch(() => {});
    await s.close();
  });

  const source = () => new RedisShipSource(s.redis!, s.prefix);
  const shipper = (over: Partial<ShipperOptions> = {}) =>
    new LedgerShipper({ source: source(), archive, hotHours: 0, logger: createLogger('silent'), batch: 500, ...over });
  /** What PostgreSQL holds, on a connection of its own (the server is stopped and started by a test). */
  async function stored(): Promise<{ request_id: string; charged_tokens: string }[]> {
    const c = new Client({ connectionString: pg.url });
    await c.connect();
    try {
      return (await c.query('SELECT request_id, charged_tokens FROM usage_records')).rows;
    } finally {
      await c.end();
    }
  }
  const xlen = (accountId: string) => s.redis!.xlen(`${s.prefix}{${accountId}}:u`);

  /** `n` settlements on a new key of its own account; returns the key. */
  async function settled(n: number) {
    const k = await keyWithTokens(s.store, 10_000_000);
    for (let i = 0; i < n; i += 100)
      await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => s.store.settle(settlement(k, randomUUID(), 15 + (i % 7)))));
    await rolled(k.accountId);
    return k;
  }
  /** The rollup follower's pass over the account, which the shipper ships behind (as a second in production). */
  const rolled = (accountId: string) => (s.store as RedisStore).rollups.follow(accountId);

  it('ships every record exactly once, summing to the balance drop, and trims Redis to the hot window (0 h: all shipped)', async () => {
    const a = await settled(3_000);
    const b = await settled(1_200);
    const metrics = new Metrics();
    const one = shipper({ metrics });
    await one.pass();
    const rows = await stored();
    expect(rows).toHaveLength(4_200);
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(4_200);
    const drop = 2 * 10_000_000 - (await s.store.getKey(a.id))!.balance - (await s.store.getKey(b.id))!.balance;
    expect(rows.reduce((sum, r) => sum + Number(r.charged_tokens), 0)).toBe(drop);
    expect([await xlen(a.accountId), await xlen(b.accountId)]).toEqual([0, 0]);
    expect((await metrics.ledgerBacklog.get()).values[0].value).toBe(0);
    // New records after the pass: the next pass ships those alone.
    await s.store.settle(settlement(a, 'late', 20));
    await rolled(a.accountId);
    await one.pass();
    expect(await stored()).toHaveLength(4_201);
  });

  it('keeps the hot window in Redis: shipped records younger than LEDGER_HOT_HOURS stay', async () => {
    const a = await settled(300);
    await shipper({ hotHours: 48 }).pass();
    expect(await stored()).toHaveLength(300);
    expect(await xlen(a.accountId)).toBe(300);
  });

  it('stores a batch once when it is shipped again after a crash between the commit and the cursor’s move', async () => {
    const a = await settled(1_000);
    const real = source();
    let crashes = 1;
    const crashing: ShipSource = Object.assign(Object.create(real) as ShipSource, {
      advance: async (...args: Parameters<ShipSource['advance']>) => {
        if (crashes-- > 0) throw new Error('killed after the commit');
        return real.advance(...args);
      },
    });
    await shipper({ source: crashing, leaseMs: 200 }).pass();
    expect(await stored()).toHaveLength(500); // the first batch committed, its cursor never moved
    expect(await xlen(a.accountId)).toBe(1_000);
    await new Promise((r) => setTimeout(r, 250)); // the dead shipper's lease runs out; another takes over
    await shipper().pass();
    const rows = await stored();
    expect(rows).toHaveLength(1_000);
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(1_000);
    expect(await xlen(a.accountId)).toBe(0);
  });

  it('lets one shipper per account ship: another waits for the lease', async () => {
    const a = await settled(10);
    expect(await source().lease(a.accountId, 'first', 10_000)).toBe(true);
    await shipper().pass();
    expect(await stored()).toHaveLength(0);
    expect(await xlen(a.accountId)).toBe(10);
    // The holder lost nothing: it renews, and a shipper that is not the holder cannot move the cursor.
    expect(await source().lease(a.accountId, 'first', 10_000)).toBe(true);
    expect(await source().advance(a.accountId, 'second', '9999999999999-0', 10, Date.now())).toBe(false);
    expect(await source().shipped(a.accountId)).toBe('0-0');
  });

  it('gives its leases up when it stops, so another shipper takes over at once', async () => {
    const a = await settled(10);
    const first = shipper();
    await first.pass();
    await first.stop();
    await s.store.settle(settlement(a, 'after-the-stop', 20));
    await rolled(a.accountId);
    await shipper().pass();
    expect(await stored()).toHaveLength(11);
  });

  it('keeps every record in Redis while PostgreSQL is down, counts the backlog, and ships it when PostgreSQL is back', async () => {
    const a = await settled(400);
    const metrics = new Metrics();
    const one = shipper({ metrics });
    await pg.stop();
    try {
      await one.pass();
      expect(await xlen(a.accountId)).toBe(400);
      expect((await metrics.ledgerBacklog.get()).values[0].value).toBe(400);
      expect((await metrics.ledgerOldestUnshipped.get()).values[0].value).toBeGreaterThanOrEqual(0);
      expect(await s.store.settle(settlement(a, 'while-down', 20))).toMatchObject({ kind: 'settled' });
      await rolled(a.accountId);
    } finally {
      await pg.start();
    }
    await one.pass();
    expect(await stored()).toHaveLength(401);
    expect(await xlen(a.accountId)).toBe(0);
    expect((await metrics.ledgerBacklog.get()).values[0].value).toBe(0);
  }, 30_000);

  it('drops whole months past LEDGER_RETENTION_MONTHS', async () => {
    const old = Math.floor(Date.UTC(2024, 0, 15) / 1000);
    const record = { ...settlement({ id: null, accountId: 'acc_x' }, 'old', 15), endpoint: 'chat', cachedTokens: 0, reasoningTokens: 0 };
    await archive.store([{ ...record, created: old, cursor: `${old * 1000}-0` }]);
    await settled(5);
    await shipper({ retentionMonths: 12 }).pass();
    expect((await archive.partitions()).map((p) => p.name)).not.toContain('usage_records_202401');
    expect((await stored()).map((r) => r.request_id)).not.toContain('old');
    expect(await stored()).toHaveLength(5);
  });

  it('without an archive trims only with LEDGER_TRIM_AFTER_DAYS, and only records older than it', async () => {
    const a = await settled(20);
    await shipper({ archive: null }).pass();
    expect(await xlen(a.accountId)).toBe(20);
    // A day from now, the 20 records are a day old: one day's trimming drops them, seven days' keep them.
    const tomorrow = () => Date.now() + 86_400_000 + 1_000;
    await shipper({ archive: null, trimAfterDays: 7, now: tomorrow }).pass();
    expect(await xlen(a.accountId)).toBe(20);
    await shipper({ archive: null, trimAfterDays: 1, now: tomorrow }).pass();
    expect(await xlen(a.accountId)).toBe(0);
  });

  it('reads one ledger across the boundary: paging forward and back returns each record once, in order', async () => {
    const a = await settled(250);
    await shipper({ hotHours: 48, batch: 100 }).pass(); // all shipped, all still in Redis' hot window
    const more = [];
    for (let i = 0; i < 50; i++) more.push((await s.store.settle(settlement(a, `unshipped-${i}`, 15))).kind);
    await rolled(a.accountId);
    const usage = archivedUsage(s.store, source(), archive);
    const everything = (await s.store.usage({ accountId: a.accountId, limit: 1000 })).map((r) => r.cursor);
    expect(everything).toHaveLength(300);
    const forward: string[] = [];
    for (let after = '0-0'; ;) {
      const page = await usage({ accountId: a.accountId, after, limit: 40 });
      forward.push(...page.map((r) => r.cursor));
      if (page.length < 40) break;
      after = page[page.length - 1].cursor;
    }
    expect(forward).toEqual(everything);
    const back: string[] = [];
    for (let before: string | undefined; ;) {
      const page = await usage({ keyId: a.id, before, limit: 40 });
      back.unshift(...page.map((r) => r.cursor));
      if (page.length < 40) break;
      before = page[0].cursor;
    }
    expect(back).toEqual(everything);
    // Shipped records are read from PostgreSQL alone: trimmed from Redis, they are all still there.
    await s.redis!.del(`${s.prefix}{${a.accountId}}:sl`); // the first shipper is gone, its lease with it
    await shipper({ hotHours: 0, batch: 100 }).pass();
    expect(await xlen(a.accountId)).toBe(0);
    expect((await usage({ accountId: a.accountId, limit: 1000 })).map((r) => r.cursor)).toEqual(everything);
  });
});

describe('the archive’s options', () => {
  it('refuses LEDGER_DATABASE_URL without a Redis store, and a URL that is not postgres://', async () => {
    const refused = (options: object) =>
      createTokenmeter({ logLevel: 'silent', models: [{ id: 'acme/m1', context_length: 8192, max_output_tokens: 1024 }], ...options }).then(
        () => undefined,
        (e: unknown) => e,
      );
    const noRedis = await refused({ ledgerDatabaseUrl: 'postgres://u@127.0.0.1:1/db' });
    expect(noRedis).toBeInstanceOf(ConfigError);
    expect((noRedis as ConfigError).option).toBe('ledgerDatabaseUrl');
    expect(await refused({ ledgerDatabaseUrl: 'mysql://u@h/db' })).toBeInstanceOf(ConfigError);
  });
});
