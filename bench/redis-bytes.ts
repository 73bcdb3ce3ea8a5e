/**
 * Redis bytes per settled request: INFO memory's used_memory before and after N settlements through the RedisStore
 * (request ids as the proxy makes them: UUIDv7 where the measured tree has newRequestId, else UUIDv4; one account and key), divided by N, and MEMORY USAGE per key family. Run:
 * `npx tsx bench/redis-bytes.ts [N]`, 100 requests at a time (`REDIS_BYTES_CONCURRENCY`; at 1 each settles alone, at 100
 * a turn's reservations, and its settlements, go as one script call per group of up to 16). REDIS_BYTES_TREE=<dir> measures the store of another checkout (an earlier
 * commit's worktree) with the same workload. REDIS_BYTES_ARCHIVE=1 also ships the ledger to a PostgreSQL started here
 * (LEDGER_HOT_HOURS=0) before the second reading, and reports PostgreSQL's bytes per record.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Redis from 'ioredis';
import { startRedisServer } from '../test/helpers/redis-server';
import { startPostgresServer } from '../test/helpers/postgres-server';
import { PgLedgerArchive } from '../src/ledger-archive/ledger-archive';
import { LedgerShipper } from '../src/ledger-archive/shipper';
import { createLogger } from '../src/observability/logger';
import { RedisShipSource } from '../src/store/redis/redis-ship-source';

const N = Number(process.argv[2] ?? 20_000);
/** Requests in flight at once (REDIS_BYTES_CONCURRENCY): 1 settles each alone; many let a turn's settlements group. */
const CONCURRENCY = Number(process.env.REDIS_BYTES_CONCURRENCY ?? 100);
const tree = process.env.REDIS_BYTES_TREE ?? join(__dirname, '..');

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RedisStore } = require(join(tree, 'src/store/redis/redis-store')) as typeof import('../src/store/redis/redis-store');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ids = require(join(tree, 'src/store/ids')) as Partial<typeof import('../src/store/ids')>;
  const requestId = ids.newRequestId ?? randomUUID;
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const store = new RedisStore(new Redis(server.url), { prefix: 'tm:' });
  try {
    const made = await store.createAccount({ email: null, name: 'bench', passwordHash: null, role: 'member', status: 'active' });
    if (made.kind !== 'created') throw new Error(made.kind);
    const accountId = made.account.id;
    await store.grantPackage(accountId, { tokens: 1e12, expiresAt: null });
    const key = await store.createKey(accountId, {
      hash: randomUUID(),
      prefix: 'sk-bench',
      name: 'bench',
      expiresAt: null,
      models: null,
      limitTokens: null,
    });
    if (key.kind !== 'created') throw new Error(key.kind);
    // Each request reserved and then settled, as the proxy does (SETTLE_ONLY=1: settled without a reservation, as a
    // retry or a journal replay is).
    const settle = async () => {
      const id = requestId();
      const model = 'meta-llama/Llama-3.1-8B-Instruct';
      if (process.env.SETTLE_ONLY !== '1')
        await store.reserve({ accountId, keyId: key.key.id, requestId: id, model, fixed: 1234, unit: 1, allowance: 512, leaseMs: 60_000 });
      return store.settle({
        accountId,
        keyId: key.key.id,
        requestId: id,
        model,
        endpoint: 'chat',
        promptTokens: 1234,
        completionTokens: 321,
        chargedTokens: 1555,
        estimated: false,
        stream: true,
        status: 200,
      });
    };
    await settle(); // every key family exists before the first reading
    await redis.config('RESETSTAT');
    const before = await usedMemory(redis);
    const cpuBefore = await mainThreadCpu(redis);
    for (let i = 0; i < N; i += CONCURRENCY) await Promise.all(Array.from({ length: Math.min(CONCURRENCY, N - i) }, settle));
    const cpu = (await mainThreadCpu(redis)) - cpuBefore;
    if (process.env.REDIS_BYTES_ARCHIVE === '1') await shipAll(redis);
    const after = await usedMemory(redis);
    const families = new Map<string, number>();
    for (const k of await redis.keys('tm:*')) {
      const family = k.replace(/^tm:\{[^}]+\}:/, '').replace(/:[^:]+$/, ':*');
      families.set(family, (families.get(family) ?? 0) + Number(await redis.memory('USAGE', k, 'SAMPLES', 0)));
    }
    process.stdout.write(`${N} requests: ${((after - before) / N).toFixed(1)} bytes per request (used_memory)\n`);
    // RESERVE's and SETTLE's CPU in Redis: the scripts' time per call (INFO commandstats), the shipper's calls apart.
    const commandstats = await redis.info('commandstats');
    // Round trips: every command Redis ran for the settlements (INFO, MEMORY and KEYS of this reading left out).
    const commands = [...commandstats.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].filter(
      ([, name]) => !['info', 'config', 'memory', 'keys'].includes(name),
    );
    process.stdout.write(
      `commands per request: ${commands.map(([, name, calls]) => `${name} ${(Number(calls) / N).toFixed(2)}`).join(', ')}\n`,
    );
    const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(commandstats);
    if (stats)
      process.stdout.write(
        `scripts in Redis: ${(Number(stats[2]) / N).toFixed(1)} µs per request (${(Number(stats[1]) / N).toFixed(2)} EVALSHA per request: RESERVE and SETTLE, or SETTLE alone, a call for each group of a turn)\n`,
      );
    // CPU time, unlike the scripts' wall time above, does not grow when the machine is loaded and Redis waits for a core.
    process.stdout.write(
      `Redis main thread CPU: ${((cpu * 1e6) / N).toFixed(1)} µs per request (commands, scripts, and the I/O of every reply)\n`,
    );
    for (const [family, bytes] of [...families].sort((a, b) => b[1] - a[1]))
      process.stdout.write(`  ${family.padEnd(12)} ${(bytes / N).toFixed(1)} B/request (MEMORY USAGE)\n`);
  } finally {
    await store.close();
    redis.disconnect();
    await server.stop();
  }
}

/** Ships every record to a PostgreSQL of its own (LEDGER_HOT_HOURS=0), and prints its bytes per record. */
async function shipAll(redis: Redis): Promise<void> {
  const pg = await startPostgresServer();
  const archive = await PgLedgerArchive.open(pg.url);
  try {
    const shipper = new LedgerShipper({ source: new RedisShipSource(redis, 'tm:'), archive, hotHours: 0, logger: createLogger('silent') });
    await shipper.pass();
    const { Client } = await import('pg');
    const c = new Client({ connectionString: pg.url });
    await c.connect();
    await c.query('VACUUM ANALYZE usage_records');
    const { rows } = await c.query<{ bytes: string; n: string }>(
      `SELECT (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'usage_records'::regclass) AS bytes,
              (SELECT count(*) FROM usage_records) AS n`,
    );
    await c.end();
    process.stdout.write(`PostgreSQL: ${(Number(rows[0].bytes) / Number(rows[0].n)).toFixed(1)} bytes per record (table and indexes)\n`);
  } finally {
    await archive.close();
    await pg.destroy();
  }
}

/** The main thread's CPU seconds (user + system) so far, from INFO cpu. */
async function mainThreadCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const get = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return get('used_cpu_user_main_thread') + get('used_cpu_sys_main_thread');
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

void main();
