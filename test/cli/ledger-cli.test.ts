/**
 * `tokenmeter ledger status` (the built CLI, as operators run it) against the test redis-server and a real PostgreSQL:
 * the records not yet shipped, each account's cursor and lag, and the archive's partitions.
 */
import { randomUUID } from 'node:crypto';
import { PgLedgerArchive } from '../../src/ledger-archive/ledger-archive';
import { LedgerShipper } from '../../src/ledger-archive/shipper';
import { createLogger } from '../../src/observability/logger';
import { RedisShipSource } from '../../src/store/redis/redis-ship-source';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { runCli } from '../helpers/processes';
import { keyWithTokens, makeStore, testRedisUrl, type StoreUnderTest } from '../helpers/stores';
import { settlement } from '../store/contract-fixtures';

describe('tokenmeter ledger status', () => {
  let pg: PostgresServer;
  let s: StoreUnderTest;
  beforeAll(async () => {
    pg = await startPostgresServer();
    s = await makeStore('redis');
  }, 30_000);
  afterAll(async () => {
    await s.close();
    await pg.destroy();
  });

  it('shows the backlog, each account’s shipped cursor and lag, and the partitions', async () => {
    const k = await keyWithTokens(s.store, 10_000);
    for (let i = 0; i < 5; i++) await s.store.settle(settlement(k, randomUUID(), 15));
    const archive = await PgLedgerArchive.open(pg.url);
    const source = new RedisShipSource(s.redis!, s.prefix);
    await new LedgerShipper({ source, archive, hotHours: 48, logger: createLogger('silent') }).pass();
    await archive.close();
    await s.store.settle(settlement(k, 'after-the-pass', 15));
    await s.store.settle(settlement(k, 'another', 15));
    const env = { REDIS_URL: testRedisUrl(), REDIS_PREFIX: s.prefix!, LEDGER_DATABASE_URL: pg.url };
    const json = await runCli(['ledger', 'status', '--json'], env);
    expect(json.stderr).toBe('');
    const status = JSON.parse(json.stdout);
    const month = new Date().toISOString().slice(0, 7).replace('-', '');
    expect(status).toMatchObject({ archive: true, backlog_records: 2, partitions: [{ name: `usage_records_${month}` }] });
    expect(status.oldest_unshipped_seconds).toBeGreaterThanOrEqual(0);
    expect(status.accounts).toEqual([{ account_id: k.accountId, shipped_cursor: expect.stringMatching(/^\d+-\d+$/), backlog_records: 2 }]);
    const text = await runCli(['ledger', 'status'], env);
    expect(text.stdout).toContain('Not shipped: 2 records');
    expect(text.stdout).toContain(`${k.accountId}  shipped up to`);
    const noRedis = await runCli(['ledger', 'status'], {});
    expect(noRedis).toMatchObject({ code: 1, stderr: expect.stringContaining('set REDIS_URL') });
  });
});
