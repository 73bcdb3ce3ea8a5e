/**
 * The process entry point: the environment read once into options, createTokenmeter, listen, shut down gracefully;
 * with WORKERS > 1, a cluster primary that runs that many such servers on one port.
 */
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createApp } from './app';
import { groupMetricsInWorker } from './cluster/group-metrics';
import { runPrimary } from './cluster/primary';
import { journalFor, workerSlot } from './cluster/worker';
import { clientErrorHandler } from './http/client-error';
import { ConfigError, inEnvTerms, inEnvTermsError, listenConfig, optionsFromEnv } from './config/config';
import { listenOptionsSchema, meterOptionsSchema, parseOptions } from './config/options';
import { ModelsFileError } from './catalog/models';
import { createLogger, type Logger } from './observability/logger';
import { metricsServer } from './observability/metrics-endpoint';
import type { Store } from './store/ports/store';
import { createTokenmeter, type Tokenmeter } from './tokenmeter';

/** The server logs with the level the library would use, so its own lines and the library's are one stream. */
const logLevelSchema = meterOptionsSchema.pick({ logLevel: true });
/** Each worker's journal is named after the library's default when JOURNAL_FILE is unset. */
const journalSchema = meterOptionsSchema.pick({ journalFile: true });

export interface Running {
  server: Server;
  tokenmeter: Tokenmeter;
  store: Store;
  logger: Logger;
  shutdown(): Promise<void>;
}

/** The server's own settings, and the library's options as the environment gave them. */
function fromEnv(env: NodeJS.ProcessEnv) {
  const { port, workers, host, shutdownGraceSeconds, metricsPort, trustProxy, ...options } = optionsFromEnv(env);
  const listen = listenConfig(
    inEnvTerms(() => parseOptions(listenOptionsSchema, { port, workers, host, shutdownGraceSeconds, metricsPort, trustProxy })),
  );
  const logLevel = inEnvTerms(() => parseOptions(logLevelSchema, { logLevel: options.logLevel })).logLevel;
  return { listen, options, logLevel };
}

/** One server: the whole process, or one worker of the group (which then reports the group's metrics). */
export async function start(env: NodeJS.ProcessEnv = process.env): Promise<Running> {
  const { listen, options, logLevel } = fromEnv(env);
  const slot = workerSlot(env, listen.workers);
  const inGroup = cluster.isWorker;
  const logger = inGroup ? createLogger(logLevel).child({ worker: slot.id }) : createLogger(logLevel);
  const { journalFile } = inEnvTerms(() => parseOptions(journalSchema, { journalFile: options.journalFile }));
  const meter = await createTokenmeter({ ...options, journalFile: journalFor(journalFile, slot), logger, env }).catch((err: unknown) => {
    throw inEnvTermsError(err);
  });

  const reloadModels = async () => {
    const count = await meter.reloadModels();
    logger.info({ models: count }, 'models file reloaded');
    return count;
  };
  // SIGHUP reloads the models file; in-flight requests keep the model they started with.
  const onHangup = () =>
    reloadModels().catch((err: Error) => logger.error({ err: err.message }, 'models file refused; the old catalog stays'));
  process.on('SIGHUP', onHangup);

  // In a group, /metrics reports every worker; the primary serves METRICS_PORT, and each worker answers its collection.
  const groupMetrics = inGroup ? groupMetricsInWorker(meter.registry) : undefined;
  const app = createApp(meter, {
    logger,
    metrics: listen.metricsPort === undefined,
    metricsHandler: groupMetrics,
    trustProxy: listen.trustProxy,
  });
  const server = app.listen(listen.port, listen.host);
  // Requests Node's parser refuses (431, 400, 408) get the OpenAI error body too.
  server.on('clientError', clientErrorHandler(logger));
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Longer than typical load balancers' idle timeouts, so they close idle connections first.
  server.keepAliveTimeout = 65_000;
  let metricsListener: Server | undefined;
  let metricsPortBound: number | undefined;
  if (listen.metricsPort !== undefined && !inGroup) {
    const listener = metricsServer(meter.registry);
    metricsListener = listener;
    metricsPortBound = await new Promise<number>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(listen.metricsPort, listen.host, () => resolve((listener.address() as { port: number }).port));
    });
  }
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : listen.port;
  logger.info(
    { port: boundPort, metricsPort: metricsPortBound, host: listen.host, store: meter.store.kind, pid: process.pid },
    'tokenmeter listening',
  );

  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    (stopping ??= (async () => {
      logger.info('shutting down: no new connections; waiting for in-flight requests');
      meter.stopAccepting();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections whose last response just ended would otherwise linger until the client drops them.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 200);
      const grace = setTimeout(() => {
        logger.warn('grace period over: closing the connections still open');
        server.closeAllConnections();
      }, listen.shutdownGraceMs);
      await closed;
      clearInterval(sweep);
      clearTimeout(grace);
      metricsListener?.close();
      process.off('SIGHUP', onHangup);
      await meter.close({ timeoutMs: 10_000 });
      logger.info('stopped');
    })());
  return { server, tokenmeter: meter, store: meter.store, logger, shutdown };
}

/**
 * The process: with WORKERS > 1 (and not already a worker), the primary of a worker group; otherwise one server that
 * stops on SIGTERM/SIGINT, or when the primary it belongs to is gone. Resolves to the exit code.
 */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { listen, options, logLevel } = fromEnv(env);
  if (listen.workers > 1 && cluster.isPrimary) {
    if (options.redisUrl === undefined) {
      const detail = `${listen.workers} workers need the Redis store (REDIS_URL): the embedded store lives inside one process`;
      throw new ConfigError(`invalid configuration: WORKERS: ${detail}`, 'workers', detail);
    }
    return runPrimary({
      workers: listen.workers,
      host: listen.host,
      metricsPort: listen.metricsPort,
      stopTimeoutMs: listen.shutdownGraceMs + 15_000,
      logger: createLogger(logLevel),
    });
  }
  const running = await start(env);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
    // A worker whose primary is gone gets no more connections: drain and go.
    if (cluster.isWorker) process.once('disconnect', resolve);
  });
  await running.shutdown();
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: Error) => {
      // Config and models-file problems are one line naming what is wrong; anything else is unexpected.
      if (err instanceof ConfigError || err instanceof ModelsFileError) console.error(`tokenmeter: ${err.message}`);
      else console.error(`tokenmeter: cannot start: ${err.message}`);
      process.exit(1);
    },
  );
}
