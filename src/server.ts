/**
 * The process entry point: the environment parsed once (loadConfig), the Tokenmeter opened on it, listen, shut down
 * gracefully; with WORKERS > 1, a cluster primary that runs that many such servers on one port.
 */
import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import { createApp } from './app';
import { groupMetricsInWorker } from './cluster/group-metrics';
import { runPrimary } from './cluster/primary';
import { journalFor, workerSlot } from './cluster/worker';
import { clientErrorHandler } from './http/client-error';
import { ConfigError, inEnvTermsError, loadConfig, type Config } from './config/config';
import { OPTIONS } from './config/option-table';
import { ModelsFileError } from './catalog/models';
import { createLogger, type Logger } from './observability/logger';
import { metricsServer } from './observability/metrics-endpoint';
import type { Store } from './store/ports/store';
import { openTokenmeter, type Tokenmeter } from './tokenmeter';

export interface Running {
  server: Server;
  tokenmeter: Tokenmeter;
  store: Store;
  logger: Logger;
  shutdown(): Promise<void>;
}

/** One server: the whole process, or one worker of the group (which then reports the group's metrics). */
export async function start(env: NodeJS.ProcessEnv = process.env): Promise<Running> {
  return startWith(loadConfig(env), env);
}

/** One server from the environment's configuration, parsed already; `env` also holds the models' upstream keys. */
async function startWith(config: Config, env: NodeJS.ProcessEnv): Promise<Running> {
  const slot = workerSlot(env, config.workers);
  const inGroup = cluster.isWorker;
  const logger = inGroup ? createLogger(config.logLevel).child({ worker: slot.id }) : createLogger(config.logLevel);
  const meter = await openTokenmeter({ ...config, journalFile: journalFor(config.journalFile, slot) }, { logger, env }).catch(
    (err: unknown) => {
      throw inEnvTermsError(err);
    },
  );

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
    metrics: config.metricsPort === undefined,
    metricsHandler: groupMetrics,
    trustProxy: config.trustProxy,
    bodyTimeoutMs: config.bodyTimeoutSeconds * 1000,
  });
  const server = createServer(app).listen(config.port, config.host);
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
  if (config.metricsPort !== undefined && !inGroup) {
    const listener = metricsServer(meter.registry);
    metricsListener = listener;
    metricsPortBound = await new Promise<number>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(config.metricsPort, config.host, () => resolve((listener.address() as { port: number }).port));
    });
  }
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    { port: boundPort, metricsPort: metricsPortBound, host: config.host, store: meter.store.kind, pid: process.pid },
    'tokenmeter listening',
  );

  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    (stopping ??= (async () => {
      logger.info('shutting down: no new connections; waiting for in-flight requests');
      // One grace for the whole stop: connections, then drains under way (each also ends by its own bound).
      const graceEnds = Date.now() + config.shutdownGraceSeconds * 1000;
      meter.stopAccepting();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections whose last response just ended would otherwise linger until the client drops them.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 200);
      const grace = setTimeout(() => {
        logger.warn('grace period over: closing the connections still open');
        server.closeAllConnections();
      }, graceEnds - Date.now());
      await closed;
      clearInterval(sweep);
      clearTimeout(grace);
      metricsListener?.close();
      process.off('SIGHUP', onHangup);
      await meter.close({ timeoutMs: Math.max(0, graceEnds - Date.now()) });
      logger.info('stopped');
    })());
  return { server, tokenmeter: meter, store: meter.store, logger, shutdown };
}

/**
 * The process: with WORKERS > 1 (and not already a worker), the primary of a worker group; otherwise one server that
 * stops on SIGTERM/SIGINT, or when the primary it belongs to is gone. Resolves to the exit code.
 */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const config = loadConfig(env);
  if (config.workers > 1 && cluster.isPrimary) {
    if (config.redisUrl === undefined) {
      const detail = `${config.workers} workers need the Redis store (${OPTIONS.redisUrl.env}): the embedded store lives inside one process`;
      throw new ConfigError(`invalid configuration: ${OPTIONS.workers.env}: ${detail}`, 'workers', detail);
    }
    return runPrimary({
      workers: config.workers,
      host: config.host,
      metricsPort: config.metricsPort,
      stopTimeoutMs: config.shutdownGraceSeconds * 1000 + 15_000,
      logger: createLogger(config.logLevel),
    });
  }
  const running = await startWith(config, env);
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
