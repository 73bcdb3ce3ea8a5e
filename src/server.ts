/** The process entry point: the environment read once into options, createTokenmeter, listen, shut down gracefully. */
import type { Server } from 'node:http';
import { createApp } from './app';
import { clientErrorHandler } from './http/client-error';
import { ConfigError, inEnvTerms, inEnvTermsError, listenConfig, optionsFromEnv } from './config/config';
import { listenOptionsSchema, meterOptionsSchema, parseOptions } from './config/options';
import { ModelsFileError } from './catalog/models';
import { createLogger, type Logger } from './observability/logger';
import { metricsServer } from './observability/metrics-endpoint';
import type { Store } from './store/types';
import { createTokenmeter, type Tokenmeter } from './tokenmeter';

/** The server logs with the level the library would use, so its own lines and the library's are one stream. */
const logLevelSchema = meterOptionsSchema.pick({ logLevel: true });

export interface Running {
  server: Server;
  tokenmeter: Tokenmeter;
  store: Store;
  logger: Logger;
  shutdown(): Promise<void>;
}

export async function start(env: NodeJS.ProcessEnv = process.env): Promise<Running> {
  const { port, host, shutdownGraceSeconds, metricsPort, trustProxy, ...options } = optionsFromEnv(env);
  const listen = listenConfig(
    inEnvTerms(() => parseOptions(listenOptionsSchema, { port, host, shutdownGraceSeconds, metricsPort, trustProxy })),
  );
  const logger = createLogger(inEnvTerms(() => parseOptions(logLevelSchema, { logLevel: options.logLevel })).logLevel);
  const meter = await createTokenmeter({ ...options, logger, env }).catch((err: unknown) => {
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

  const app = createApp(meter, { logger, metrics: listen.metricsPort === undefined, trustProxy: listen.trustProxy });
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
  if (listen.metricsPort !== undefined) {
    const listener = metricsServer(meter.registry);
    metricsListener = listener;
    metricsPortBound = await new Promise<number>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(listen.metricsPort, listen.host, () => resolve((listener.address() as { port: number }).port));
    });
  }
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : listen.port;
  logger.info({ port: boundPort, metricsPort: metricsPortBound, host: listen.host, store: meter.store.kind }, 'tokenmeter listening');

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
