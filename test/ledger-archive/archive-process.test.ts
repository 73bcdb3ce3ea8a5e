/**
 * The archive as the server runs it (dist/server.js with LEDGER_DATABASE_URL and LEDGER_HOT_HOURS=0), the issue's
 * done-when at 20,000 records, most settled through the store directly (the settle step is the proxy's; driving 20,000
 * HTTP requests would take minutes) and a slice through the proxy over HTTP, while the server is SIGKILLed mid-way and
 * PostgreSQL is stopped and started under load. Then every record is in PostgreSQL exactly once, summing to the
 * balance's drop, Redis' ledger is empty, and /admin/usage paging across the boundary returns each record once.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import request from 'supertest';
import { RedisStore } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody } from '../helpers/proxy';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';
import { settlement } from '../store/contract-fixtures';

const BULK = 20_000;
const HTTP = 40;
const ADMIN_TOKEN = 'archive-test-admin-token';

describe('the ledger archive in the server', () => {
  let pg: PostgresServer;
  let upstream: TestUpstream;
  let client: Redis;
  let store: RedisStore;
  let proxy: ProxyProcess | undefined;
  const prefix = `arch${randomUUID().slice(0, 6)}:`;
  beforeAll(async () => {
    pg = await startPostgresServer();
    upstream = await startUpstream();
    client = new Redis(testRedisUrl());
    store = new RedisStore(client, { prefix });
  }, 30_000);
  afterAll(async () => {
    await proxy?.stop('SIGKILL');
    await upstream.close();
    const keys = await client.keys(`${prefix}*`);
    if (keys.length) await client.del(...keys);
    await store.close();
    await pg.destroy();
  });

  const start = () =>
    startProxyProcess({
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      ADMIN_TOKEN,
      LEDGER_DATABASE_URL: pg.url,
      LEDGER_HOT_HOURS: '0',
    });

  async function inPostgres(): Promise<{ request_id: string; charged_tokens: string }[]> {
    const c = new Client({ connectionString: pg.url });
    await c.connect();
    try {
      return (await c.query('SELECT request_id, charged_tokens FROM usage_records')).rows;
    } finally {
      await c.end();
    }
  }

  it('ships 20,000 records exactly once through a SIGKILL and a PostgreSQL restart, and reads them back once', async () => {
    const grant = 100_000_000;
    const key = await keyWithTokens(store, grant);
    proxy = await start();
    const bulk = async (from: number, to: number) => {
      for (let i = from; i < to; i += 200)
        await Promise.all(
          Array.from({ length: Math.min(200, to - i) }, (_, j) => store.settle(settlement(key, randomUUID(), 15 + ((i + j) % 5)))),
        );
    };
    const chat = async () => {
      for (let i = 0; i < HTTP; i++)
        await request(proxy!.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody()).expect(200);
    };
    await Promise.all([bulk(0, BULK / 2), chat()]);
    // Killed mid-shipping: whatever batch it had in hand is committed or not, its cursor moved or not.
    await eventually(async () => expect((await inPostgres()).length).toBeGreaterThan(0), 10_000);
    await proxy.stop('SIGKILL');
    // Its lease would run out in 30 s; dropping it stands in for the wait.
    await client.del(`${prefix}{${key.accountId}}:sl`);
    proxy = await start();
    await pg.stop();
    await bulk(BULK / 2, (BULK * 3) / 4); // PostgreSQL down: requests go on, Redis keeps everything
    await pg.start();
    await bulk((BULK * 3) / 4, BULK);
    const total = BULK + HTTP;
    const shipping = proxy;
    let waiting = true;
    try {
      // Generous for a busy machine (it takes seconds); a proxy that died ends the wait at once.
      await Promise.race([
        eventually(async () => expect((await inPostgres()).length).toBe(total), 120_000, 'every record in PostgreSQL'),
        shipping.exited().then((code) => {
          if (waiting) throw new Error(`the second proxy exited (code ${code}) before shipping every record`);
        }),
      ]);
    } catch (err) {
      // What the process said meanwhile: the finding, when this fails.
      process.stderr.write(`archive-process: the proxy's last output:\n${shipping.output().split('\n').slice(-60).join('\n')}\n`);
      throw err;
    } finally {
      waiting = false;
    }
    const rows = await inPostgres();
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(total);
    const balance = (await store.getKey(key.id))!.balance;
    expect(rows.reduce((sum, r) => sum + Number(r.charged_tokens), 0)).toBe(grant - balance);
    await eventually(async () => expect(await client.xlen(`${prefix}{${key.accountId}}:u`)).toBe(0), 5_000);
    // A record settled now is in Redis alone; the pages cross from PostgreSQL into it.
    await store.settle(settlement(key, 'last', 15));
    const seen = new Set<string>();
    let after = '0-0';
    for (;;) {
      const page = await request(proxy.url)
        .get(`/admin/usage?account_id=${key.accountId}&after=${after}&limit=1000`)
        .set('authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(200);
      for (const r of page.body.data) {
        expect(seen.has(r.request_id)).toBe(false);
        seen.add(r.request_id);
      }
      if (page.body.data.length < 1000) break;
      after = page.body.data[page.body.data.length - 1].cursor;
    }
    expect(seen.size).toBe(total + 1);
    expect(seen.has('last')).toBe(true);
    const newest = await request(proxy.url)
      .get(`/admin/usage?account_id=${key.accountId}&limit=3`)
      .set('authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(newest.body.data.map((r: { request_id: string }) => r.request_id).slice(-1)).toEqual(['last']);
  }, 180_000);
});
