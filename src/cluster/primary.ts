/**
 * The cluster primary (WORKERS > 1): forks the workers that share the port, replaces one that dies, forwards SIGHUP,
 * drains them all on SIGTERM/SIGINT, and serves the group's metrics on METRICS_PORT. It serves no requests itself.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Logger } from '../observability/logger';
import { metricsServer } from '../observability/metrics-endpoint';
import { groupMetricsInPrimary } from './group-metrics';
import { WORKER_ID_VARIABLE } from './worker';

export interface PrimaryOptions {
  workers: number;
  host: string;
  metricsPort: number | undefined;
  /** How long workers may drain on SIGTERM before the primary kills what is left (their own grace plus a margin). */
  stopTimeoutMs: number;
  logger: Logger;
}

/** The group's metrics (every worker's, merged) on their own port. */
async function serveGroupMetrics(aggregator: ReturnType<typeof groupMetricsInPrimary>, port: number, host: string): Promise<Server> {
  const server = metricsServer({ contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return server;
}

/** Runs the worker group until it is stopped; resolves to the process's exit code. */
export async function runPrimary(o: PrimaryOptions): Promise<number> {
  const { logger } = o;
  const aggregator = groupMetricsInPrimary();
  /** Each worker's slot (1..N): a replacement takes the dead worker's, and so its settlement journal. */
  const slots = new Map<Worker, number>();
  const listening = new Set<Worker>();
  let stopping = false;
  let announced = false;
  let exitCode = 0;
  let finished: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (finished = resolve));

  const fork = (slot: number) => slots.set(cluster.fork({ [WORKER_ID_VARIABLE]: String(slot) }), slot);

  cluster.on('listening', (worker, address) => {
    listening.add(worker);
    if (!announced && listening.size === o.workers) {
      announced = true;
      logger.info({ port: address.port, workers: o.workers, pid: process.pid }, 'worker group listening');
    }
  });

  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    logger.info({ workers: slots.size }, 'stopping every worker: each drains its requests');
    for (const worker of slots.keys()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      logger.warn('workers still running past the grace period: killing them');
      for (const worker of slots.keys()) worker.process.kill('SIGKILL');
    }, o.stopTimeoutMs).unref();
  };

  cluster.on('exit', (worker, code, signal) => {
    const slot = slots.get(worker) as number;
    slots.delete(worker);
    const started = listening.delete(worker);
    if (stopping) {
      if (slots.size === 0) finished(exitCode);
      return;
    }
    if (!started) {
      // A worker that could not even start (a bad models file, say) would fail the same way again: stop the group.
      logger.error({ worker: slot, code, signal }, 'a worker exited before it listened: stopping');
      stop(1);
      if (slots.size === 0) finished(1);
      return;
    }
    // Its in-flight requests are gone with it; their reservations lapse when their lease runs out, as after a crash.
    logger.warn({ worker: slot, code, signal }, 'worker died: starting a replacement');
    fork(slot);
  });

  for (let slot = 1; slot <= o.workers; slot++) fork(slot);

  const metrics = o.metricsPort === undefined ? undefined : await serveGroupMetrics(aggregator, o.metricsPort, o.host);

  const onHangup = () => {
    for (const worker of slots.keys()) worker.process.kill('SIGHUP');
  };
  process.on('SIGHUP', onHangup);
  const onStop = () => stop(0);
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);

  const code = await done;
  metrics?.close();
  process.off('SIGHUP', onHangup);
  process.off('SIGTERM', onStop);
  process.off('SIGINT', onStop);
  logger.info('stopped');
  return code;
}
