/**
 * tokenmeter exactly as `npm start` runs it (src/server.ts: all metering, the request log and the metrics on), plus
 * one bench key with a huge token package; prints `{"ready":true,"port":…,"key":"sk-…"}` once listening, and shuts
 * down cleanly on SIGTERM/SIGINT (so --cpu-prof is written). With WORKERS > 1 (Redis only) it is the cluster's
 * primary, as `npm start` would be: the key is made in Redis first, and the ready line waits for every worker.
 * A single process also serves its event-loop delay and GC pauses on a side port (`statsPort`, see loop-stats.ts).
 * BENCH_KEY_LIMITS (JSON, the admin API's `limits`) gives the key rate and concurrency limits, set too high to refuse
 * anything: what checking them costs. BENCH_WEBHOOK_URL adds a webhook endpoint there that wants `usage.settled` (an
 * event per request, the costliest type): what the outbox write and the delivery cost; BENCH_WEBHOOK_BATCH makes it
 * a batching endpoint (that many events per POST at most). BENCH_POOL serves the models from an upstream pool of the
 * URLs it lists (docs/upstream-pools.md): what balancing over a pool costs.
 */
import cluster from 'node:cluster';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { generateKey } from '../src/http/keys';
import { limitsSchema } from '../src/limits/limits';
import { main as serverMain, start } from '../src/server';
import { RedisStore } from '../src/store/redis/redis-store';
import type { Store } from '../src/store/ports/store';
import { RedisWebhookStore } from '../src/store/redis/redis-webhook-store';
import './gc-on-signal';
import { serveLoopStats } from './loop-stats';
import { BENCH_EMBED_MODEL, BENCH_EMBED_UPSTREAM_MODEL, BENCH_MODEL, BENCH_UPSTREAM_MODEL } from './workload';

/** The bench key's package: more tokens than any run can spend. */
const TOKENS = 1e12;
const KEY_LIMITS = process.env.BENCH_KEY_LIMITS ? limitsSchema.parse(JSON.parse(process.env.BENCH_KEY_LIMITS)) : null;

/** The server's environment: a models file and a journal of this run's own. */
function benchEnv(): NodeJS.ProcessEnv {
  if (cluster.isWorker) return process.env;
  const dir = mkdtempSync(join(tmpdir(), 'tm-bench-'));
  const modelsFile = join(dir, 'models.yaml');
  // BENCH_POOL (base URLs, comma-separated): both models served by one upstream pool of those servers.
  const pool = process.env.BENCH_POOL?.split(',');
  const upstreams = pool ? `upstreams:\n  - name: bench-pool\n    servers:\n${pool.map((url) => `      - url: ${url}\n`).join('')}` : '';
  const upstream = pool ? '    upstream: bench-pool\n' : '';
  writeFileSync(
    modelsFile,
    `${upstreams}models:\n  - id: ${BENCH_MODEL}\n    upstream_model: ${BENCH_UPSTREAM_MODEL}\n${upstream}    endpoints: [chat, completions, responses, messages]\n    context_length: 32768\n    max_output_tokens: 4096\n` +
      `  - id: ${BENCH_EMBED_MODEL}\n    upstream_model: ${BENCH_EMBED_UPSTREAM_MODEL}\n${upstream}    endpoints: [embeddings]\n    context_length: 8192\n`,
  );
  return { ...process.env, HOST: '127.0.0.1', MODELS_FILE: modelsFile, JOURNAL_FILE: join(dir, 'journal'), SHUTDOWN_GRACE_SECONDS: '2' };
}

/** An account with a huge package and one key (with limits when asked); returns the key's secret. */
async function benchKey(store: Store): Promise<string> {
  const key = generateKey();
  const created = await store.createAccount({ email: null, name: 'bench', passwordHash: null, role: 'member', status: 'active' });
  if (created.kind !== 'created') throw new Error('an account without an email cannot clash');
  await store.createKey(created.account.id, {
    hash: key.hash,
    prefix: key.prefix,
    name: 'bench',
    expiresAt: null,
    models: null,
    limits: KEY_LIMITS,
  });
  await store.grantPackage(created.account.id, { tokens: TOKENS, expiresAt: null });
  return key.secret;
}

/** BENCH_WEBHOOK_URL: the endpoint, made before the server starts (so its first requests already write events). */
async function benchWebhook(env: NodeJS.ProcessEnv): Promise<void> {
  if (!env.BENCH_WEBHOOK_URL || !env.REDIS_URL) return;
  const redis = new Redis(env.REDIS_URL);
  const batch = env.BENCH_WEBHOOK_BATCH ? { batch: Number(env.BENCH_WEBHOOK_BATCH) } : {};
  const endpoint = { id: 'we_bench', url: env.BENCH_WEBHOOK_URL, secret: 'whsec_bench', created: 0, ...batch };
  await new RedisWebhookStore(redis, { prefix: env.REDIS_PREFIX }).createEndpoint({ ...endpoint, types: ['usage.settled'] });
  redis.disconnect();
}

/** The worker group: the key made through a Redis connection of our own, then the server's own primary. */
async function group(env: NodeJS.ProcessEnv, workers: number): Promise<void> {
  const store = new RedisStore(new Redis(env.REDIS_URL as string), { prefix: env.REDIS_PREFIX ?? 'tm:' });
  const secret = await benchKey(store);
  await store.close();
  // The workers are forked with this process's environment: give it the run's models file and journal.
  Object.assign(process.env, env);
  let listening = 0;
  cluster.on('listening', (_worker, address) => {
    if (++listening === workers) console.log(JSON.stringify({ ready: true, port: address.port, key: secret, store: 'redis', workers }));
  });
  process.exit(await serverMain(env));
}

async function single(env: NodeJS.ProcessEnv): Promise<void> {
  await benchWebhook(env);
  const running = await start(env);
  const secret = await benchKey(running.store);
  const { port } = running.server.address() as AddressInfo;
  // What the event loop waited on during the fixed-rate phases (bench/loop-stats.ts): a side port, bench only.
  const statsPort = await serveLoopStats();
  console.log(JSON.stringify({ ready: true, port, key: secret, store: running.store.kind, statsPort }));
  const stop = () => running.shutdown().then(() => process.exit(0));
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

const env = benchEnv();
const workers = Number(env.WORKERS ?? 1);
const run = cluster.isWorker ? serverMain(env).then((code) => process.exit(code)) : workers > 1 ? group(env, workers) : single(env);
run.catch((err: Error) => {
  console.error(`tokenmeter-server: ${err.message}`);
  process.exit(1);
});
