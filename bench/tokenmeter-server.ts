/**
 * tokenmeter as `src/server.ts` builds it (all metering on), plus one bench key with a huge token package; prints
 * `{"ready":true,"port":…,"key":"sk-…"}` once listening, and exits cleanly on SIGTERM/SIGINT (so --cpu-prof is written).
 */
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { generateKey } from '../src/keys';
import { createLogger } from '../src/logger';
import { Meter } from '../src/metering';
import { buildCatalog } from '../src/models';
import { createStore } from '../src/store/create-store';
import type { Store } from '../src/store/types';
import { Upstreams } from '../src/upstream-proxy';
import './gc-on-signal';
import { BENCH_MODEL, BENCH_UPSTREAM_MODEL } from './workload';

/** The bench key's package: more tokens than any run can spend. */
const TOKENS = 1e12;

async function main(): Promise<void> {
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env, PORT: '0', HOST: '127.0.0.1' });
  const logger = createLogger(config.logLevel);
  const catalog = buildCatalog(
    { models: [{ id: BENCH_MODEL, upstream_model: BENCH_UPSTREAM_MODEL, context_length: 32768, max_output_tokens: 4096 }] },
    { upstreamUrl: config.upstreamUrl },
  );
  const store = createStore(config, logger);
  const meter = new Meter({ store, leaseMs: config.leaseMs, logger });
  const upstreams = new Upstreams(config.upstreamMaxFreeSockets);
  const app = createApp({ config, store, catalog: () => catalog, meter, upstreams, logger });

  await storeAnswers(store, 10_000);
  const key = generateKey();
  const record = await store.createKey({ hash: key.hash, prefix: key.prefix, name: 'bench', expiresAt: null, models: null });
  await store.grantPackage(record.id, { tokens: TOKENS, expiresAt: null });

  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ ready: true, port, key: key.secret, store: store.kind }));

  const stop = async () => {
    server.closeAllConnections();
    server.close();
    await meter.drain(2_000);
    meter.stop();
    upstreams.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

/** Waits for the store to answer (Redis connects asynchronously, and refuses commands until it has). */
async function storeAnswers(store: Store, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await store.ping();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

main().catch((err: Error) => {
  console.error(`tokenmeter-server: ${err.message}`);
  process.exit(1);
});
