/**
 * `tokenmeter ledger status` (the built CLI, as operators run it) against a server with the archive on (the test
 * redis-server and a real PostgreSQL): the records not yet shipped, each account's cursor and lag, the partitions.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { runCli, startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { settlement } from '../store/contract-fixtures';

const ADMIN_TOKEN = 'ledger-cli-admin-token-0001';

describe('tokenmeter ledger status', () => {
  let pg: PostgresServer;
  let client: Redis;
  let store: RedisStore;
  let proxy: ProxyProcess;
  const prefix = `lcli${randomUUID().slice(0, 6)}:`;
  beforeAll(async () => {
    pg = await startPostgresServer();
    client = new Redis(testRedisUrl());
    store = new RedisStore(client, { prefix });
  }, 30_000);
  afterAll(async () => {
    await proxy?.stop('SIGKILL');
    const keys = await client.keys(`${prefix}*`);
    if (keys.length) await client.del(...keys);
    await store.close();
    await pg.destroy();
  });

  it('shows the backlog, each account’s shipped cursor and lag, and the partitions', async () => {
    const k = await keyWithTokens(store, 10_000);
    for (let i = 0; i < 5; i++) await store.settle(settlement(k, randomUUID(), 15));
    const env = { REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, MODELS_FILE: writeModelsFile(), ADMIN_TOKEN };
    proxy = await startProxyProcess({ ...env, LEDGER_DATABASE_URL: pg.url });
    const cli = { TOKENMETER_URL: proxy.url, TOKENMETER_ADMIN_TOKEN: ADMIN_TOKEN };
    await eventually(async () => {
      const status = JSON.parse((await runCli(['ledger', 'status', '--json'], cli)).stdout);
      const month = new Date().toISOString().slice(0, 7).replace('-', '');
      expect(status).toMatchObject({ archive: true, backlog_records: 0, oldest_unshipped_seconds: null });
      // Five records, counted: a partition this small has no estimate yet (PostgreSQL says 0 until ANALYZE).
      expect(status.partitions).toEqual([{ name: `usage_records_${month}`, rows: 5, exact: true }]);
      expect((await runCli(['ledger', 'status'], cli)).stdout).toContain(`usage_records_${month} (5 rows)`);
    }, 10_000);
    // A server whose PostgreSQL does not answer ships nothing: the backlog shows what comes next.
    await proxy.stop('SIGKILL');
    await store.settle(settlement(k, 'after-the-pass', 15));
    await store.settle(settlement(k, 'another', 15));
    proxy = await startProxyProcess({ ...env, LEDGER_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    const cliNow = { TOKENMETER_URL: proxy.url, TOKENMETER_ADMIN_TOKEN: ADMIN_TOKEN };
    const json = await runCli(['ledger', 'status', '--json'], cliNow);
    expect(json.stderr).toBe('');
    const status = JSON.parse(json.stdout);
    expect(status).toMatchObject({ archive: true, backlog_records: 2, partitions: null });
    expect(status.oldest_unshipped_seconds).toBeGreaterThanOrEqual(0);
    expect(status.accounts).toEqual([{ account_id: k.accountId, shipped_cursor: expect.stringMatching(/^\d+-\d+$/), backlog_records: 2 }]);
    const text = await runCli(['ledger', 'status'], cliNow);
    expect(text.stdout).toContain('Not shipped: 2 records');
    expect(text.stdout).toContain(`${k.accountId}  shipped up to`);
    expect(text.stdout).toContain('Partitions: PostgreSQL does not answer');
  }, 60_000);
});
