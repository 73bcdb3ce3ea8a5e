/** The process entry point: parse config once, build every service, listen, and shut down gracefully. */
import type { Server } from 'node:http';
import { createApp } from './app';
import { ConfigError, loadConfig, type Config } from './config/config';
import { Journal } from './metering/journal';
import { createLogger, type Logger } from './observability/logger';
import { Meter } from './metering/metering';
import { metricsServer } from './observability/metrics-endpoint';
import { Metrics } from './observability/metrics';
import { ModelsFile, ModelsFileError } from './catalog/models';
import { createStore } from './store/create-store';
import { RedisStore } from './store/redis-store';
import { instrumentStore } from './store/instrumented-store';
import type { Store } from './store/types';
import { Upstreams } from './proxy/upstream-proxy';

export interface Running {
  server: Server;
  config: Config;
  store: Store;
  meter: Meter;
  metrics: Metrics;
  logger: Logger;
  shutdown(): Promise<void>;
}

export async function start(env: NodeJS.ProcessEnv = process.env): Promise<Running> {
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel);
  const models = new ModelsFile(config.modelsFile, { upstreamUrl: config.upstreamUrl, upstreamApiKey: config.upstreamApiKey, env });
  const metrics = new Metrics({ perKey: config.metricsPerKey });
  const backend = createStore(config, logger);
  const store = instrumentStore(backend, metrics);
  // The journal only matters for a store that can be unreachable; the memory store lives and dies with the process.
  const journal = config.redisUrl ? openJournal(config.journalFile) : undefined;
  const meter = new Meter({ store, leaseMs: config.leaseMs, logger, metrics, journal });
  const lifecycle = { draining: false };
  const upstreams = new Upstreams(config.upstreamMaxFreeSockets);
  const reloadModels = async () => {
    const count = await models.reload();
    logger.info({ models: count }, 'models file reloaded');
    return count;
  };
  const app = createApp({ config, store, catalog: models.current, meter, upstreams, logger, metrics, reloadModels, lifecycle });
  // SIGHUP reloads the models file; in-flight requests keep the model they started with.
  const onHangup = () =>
    reloadModels().catch((err: Error) => logger.error({ err: err.message }, 'models file refused; the old catalog stays'));
  process.on('SIGHUP', onHangup);

  // Give Redis a moment to connect so the first requests are not refused; start anyway (failing closed) if it is down.
  let upgrading: NodeJS.Timeout | undefined;
  if (await storeAnswers(store, 3_000)) {
    if (backend instanceof RedisStore) await migrateStore(backend, logger);
  } else {
    logger.warn('store not reachable at start; requests get 503 until it is');
    // Keys from before accounts are refused (never served unmetered) until the upgrade has run: retry it until it does.
    if (backend instanceof RedisStore) {
      upgrading = setInterval(() => {
        migrateStore(backend, logger).then(
          () => clearInterval(upgrading),
          () => {},
        );
      }, 2_000);
      upgrading.unref();
    }
  }

  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Longer than typical load balancers' idle timeouts, so they close idle connections first.
  server.keepAliveTimeout = 65_000;
  let metricsPort: number | undefined;
  let metricsListener: Server | undefined;
  if (config.metricsPort !== undefined) {
    const listener = metricsServer(metrics);
    metricsListener = listener;
    metricsPort = await new Promise<number>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(config.metricsPort, config.host, () => resolve((listener.address() as { port: number }).port));
    });
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port, metricsPort, host: config.host, store: store.kind, models: models.current().list().length }, 'tokenmeter listening');

  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    (stopping ??= (async () => {
      logger.info('shutting down: no new connections; waiting for in-flight requests');
      lifecycle.draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections whose last response just ended would otherwise linger until the client drops them.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 200);
      const grace = setTimeout(() => {
        logger.warn('grace period over: closing the connections still open');
        server.closeAllConnections();
      }, config.shutdownGraceMs);
      await closed;
      clearInterval(sweep);
      clearTimeout(grace);
      metricsListener?.close();
      const drained = await meter.drain(10_000);
      if (!drained) logger.error({ backlog: meter.backlog() }, 'settlements still pending at exit; the journal keeps them');
      process.off('SIGHUP', onHangup);
      clearInterval(upgrading);
      meter.stop();
      journal?.close();
      upstreams.close();
      await store.close();
      logger.info('stopped');
    })());
  return { server, config, store, meter, metrics, logger, shutdown };
}

function openJournal(file: string): Journal {
  try {
    return new Journal(file);
  } catch (err) {
    throw new ConfigError(
      `invalid configuration: JOURNAL_FILE: cannot open ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

/** Moves a store written before accounts to the account layout (a no-op once done; see redis-migration.ts). */
async function migrateStore(store: RedisStore, logger: Logger): Promise<void> {
  const migrated = await store.migrate();
  if (migrated > 0) logger.info({ keys: migrated }, 'store upgraded: each key from before accounts is now the only key of its own account');
}

async function storeAnswers(store: Store, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await store.ping();
      return true;
    } catch {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

if (require.main === module) {
  start().then(
    (running) => {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          running.shutdown().then(() => process.exit(0));
        });
      }
    },
    (err: Error) => {
      // Config and models-file problems are one line naming what is wrong; anything else is unexpected.
      if (err instanceof ConfigError || err instanceof ModelsFileError) console.error(`tokenmeter: ${err.message}`);
      else console.error(`tokenmeter: cannot start: ${err.message}`);
      process.exit(1);
    },
  );
}
