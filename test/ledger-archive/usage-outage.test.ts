/**
 * Partial outages say what is down: the server with its ledger archived (dist/server.js, LEDGER_DATABASE_URL) while
 * PostgreSQL is stopped serves the usage Redis holds (the newest page) and answers a page that needs the archive with
 * `503 archive_unavailable` naming the archive, not the metering store, which is up.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import request from 'supertest';
import { RedisStore } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { settlement } from '../store/contract-fixtures';

const ADMIN_TOKEN = 'usage-outage-admin-token';

describe('usage reads with PostgreSQL down', () => {
  let pg: PostgresServer;
  let client: Redis;
  let store: RedisStore;
  let proxy: ProxyProcess | undefined;
  const prefix = `uout${randomUUID().slice(0, 6)}:`;
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

  it('serves the newest page from Redis and refuses only the archived part, naming the archive', async () => {
    const key = await keyWithTokens(store, 1_000_000);
    proxy = await startProxyProcess({
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: 'http://127.0.0.1:9/v1',
      MODELS_FILE: writeModelsFile(),
      ADMIN_TOKEN,
      LEDGER_DATABASE_URL: pg.url,
      LEDGER_HOT_HOURS: '0',
    });
    const usage = (query: string) =>
      request(proxy!.url).get(`/admin/usage?account_id=${key.accountId}&${query}`).set('authorization', `Bearer ${ADMIN_TOKEN}`);
    for (let i = 0; i < 10; i++) await store.settle(settlement(key, `old-${i}`, 15));
    // Shipped, and gone from Redis (no hot window): these only PostgreSQL holds.
    await eventually(async () => expect(await client.xlen(`${prefix}{${key.accountId}}:u`)).toBe(0), 30_000);
    const first = (await usage('limit=1000')).body.data[0].cursor as string;

    await pg.stop();
    try {
      const recent = Array.from({ length: 5 }, (_, i) => `new-${i}`);
      for (const id of recent) await store.settle(settlement(key, id, 15));
      const newest = await usage('limit=5');
      expect(newest.status).toBe(200);
      expect(newest.body.data.map((r: { request_id: string }) => r.request_id)).toEqual(recent);

      for (const page of [await usage('limit=50'), await usage(`after=${first}&limit=5`)]) {
        expect(page.status).toBe(503);
        expect(page.body.error.code).toBe('archive_unavailable');
        expect(page.body.error.message).toMatch(/ledger archive \(PostgreSQL\)/);
      }
    } finally {
      await pg.start();
    }
    expect((await usage('limit=1000')).body.data).toHaveLength(15);
  }, 90_000);
});
