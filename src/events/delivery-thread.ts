/**
 * The webhooks' delivery worker in a thread of its own (WEBHOOK_DELIVERY_THREAD=true, on REDIS_URL): its hand-on,
 * sweeps, POSTs and the Redis calls that record them run on another event loop and another heap, so a burst of
 * deliveries (every event of the last second, at the round's start) is not queued among a request's callbacks and
 * adds nothing to the request path's garbage collections. It needs a core of its own to pay: on a process pinned to
 * one core the kernel's time slices between the two threads lengthened the requests' tail (docs/performance.md).
 * The thread opens its own connection (delivery-thread-main.ts); the events stay in Redis, so a thread that fails
 * loses nothing: it is started again and delivers what is due.
 * The request path's own event gates stay here (event-gates.ts): an endpoint's change is answered only once this
 * process writes what it asks, without a message to the thread in between.
 */
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../cluster/thread-entry';
import type { Logger } from '../observability/logger';
import type { LowBalanceDefault } from '../store/records/events';
import type { DeliveryStoreConfig } from '../store/create-store';
import type { EndpointGauges } from './delivery-worker';

const THREAD = threadEntry(__filename, 'delivery-thread-main');
/**
 * A thread that ended on its own is started again after this long, twice as long after each that ended within
 * FAILING_MS of its start (one that cannot start, say), up to MAX_RESTART_FACTOR times the first: a thread failing at every start is
 * started, and logged, once a minute rather than once a second. One that ran longer starts the count again.
 */
const RESTART_MS = 1_000;
/** The longest wait, as a multiple of the first (restartMs in the tests): a minute. */
const MAX_RESTART_FACTOR = 60;
const FAILING_MS = 60_000;
/** How long stop() waits for the thread to finish its attempts in flight (each is recorded first) before ending it. */
const STOP_MS = 15_000;

/** What the thread is started with: plain data (a thread gets copies, never objects with behaviour). */
export interface DeliveryThreadData {
  store: DeliveryStoreConfig;
  logLevel: string;
  lowBalance: LowBalanceDefault;
  timeoutMs: number;
  packageExpiringDays: number;
}

/** The thread's messages: a gauge's new value for an endpoint (null: the endpoint is gone), or that it stopped. */
export type DeliveryThreadMessage = { gauge: keyof EndpointGauges; endpoint: string; value: number | null } | { stopped: true };

export interface DeliveryThreadOptions {
  data: DeliveryThreadData;
  logger: Logger;
  metrics?: EndpointGauges;
  /** The first restart's wait (RESTART_MS; the back-off's longest is MAX_RESTART_FACTOR times it). */
  restartMs?: number;
}

export class DeliveryThread {
  private worker: Worker | undefined;
  private restart: NodeJS.Timeout | undefined;
  private stopping = false;
  /** Restarts in a row of threads that ended within FAILING_MS of their start. */
  private failing = 0;

  constructor(private readonly o: DeliveryThreadOptions) {}

  start(): void {
    const began = Date.now();
    const worker = new Worker(THREAD.file, { execArgv: THREAD.execArgv, workerData: this.o.data });
    this.worker = worker;
    // Never what keeps the process alive: stop() ends it.
    worker.unref();
    worker.on('message', (m: DeliveryThreadMessage) => {
      if (!('gauge' in m)) return;
      const gauge = this.o.metrics?.[m.gauge];
      if (m.value === null) gauge?.remove({ endpoint: m.endpoint });
      else gauge?.set({ endpoint: m.endpoint }, m.value);
    });
    worker.on('error', (err) => this.o.logger.error({ err: err.message }, 'webhook delivery thread failed'));
    worker.on('exit', () => {
      if (this.worker !== worker || this.stopping) return;
      const first = this.o.restartMs ?? RESTART_MS;
      this.failing = Date.now() - began < FAILING_MS ? this.failing + 1 : 1;
      const inMs = first * Math.min(2 ** (this.failing - 1), MAX_RESTART_FACTOR);
      this.o.logger.warn({ inMs }, 'webhook delivery thread ended; starting it again');
      this.restart = setTimeout(() => this.start(), inMs);
      this.restart.unref();
    });
  }

  /** Stops after the round under way and the attempts in flight, as the worker in the process does. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restart);
    const worker = this.worker;
    if (!worker) return;
    // Stopped (its attempts recorded, its connection closed), or gone, or past the wait: then ended at once.
    await new Promise<void>((resolve) => {
      const late = setTimeout(resolve, STOP_MS);
      const done = () => {
        clearTimeout(late);
        resolve();
      };
      worker.on('message', (m: DeliveryThreadMessage) => 'stopped' in m && done());
      worker.once('exit', done);
      worker.postMessage('stop');
    });
    await worker.terminate();
  }
}
