/**
 * The webhooks' delivery worker, apart from every request: it keeps what the stores write in step with the endpoints
 * configured (event-gates.ts), hands the accounts' outbox events to the endpoints' queues each round, sweeps for
 * package expiry, and wakes each endpoint's own delivery loop (endpoint-loop.ts). No round waits on a delivery. It
 * runs on the request path's event loop, or in a thread of its own (delivery-thread.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../observability/logger';
import type { EventOutbox } from '../store/ports/event-outbox';
import type { WebhookBackend } from '../store/ports/webhook-store';
import type { LowBalanceDefault, WebhookEndpoint } from '../store/records/events';
import { AttemptSlots } from './attempt-slots';
import { FIRST_RETRY_MS } from './backoff';
import { EndpointLoop, type LoopDeps } from './endpoint-loop';
import { EventGates } from './event-gates';
import { handOn } from './hand-on';

/** A gauge with an endpoint label, as the worker sets it (a prom-client Gauge, or the delivery thread's messages). */
export interface EndpointGauge {
  set(labels: { endpoint: string }, value: number): void;
  remove(labels: { endpoint: string }): void;
}

/** The worker's gauges, as the process's Metrics names them. */
export type EndpointGauges = Record<'webhookBacklog' | 'webhookOldestSeconds', EndpointGauge>;

export interface DeliveryWorkerOptions {
  /** The outbox the worker reads, drops and sweeps (on Redis: a connection of its own, not the requests'). */
  outbox: EventOutbox;
  webhooks: WebhookBackend;
  /** The stores whose steps write events, told what to write. Default: the outbox alone. */
  writers?: Pick<EventOutbox, 'wantEvents'>[];
  logger: Logger;
  /** Where the backlog gauges go (tokenmeter_webhook_backlog, tokenmeter_webhook_oldest_seconds). */
  metrics?: EndpointGauges;
  /** balance.low's threshold for accounts without their own. */
  lowBalance: LowBalanceDefault;
  /** A receiver slower than this to answer counts as failed. Default 10000. */
  timeoutMs?: number;
  /** Time between rounds. Default 1000. */
  pollMs?: number;
  /** The first retry's delay (doubling after). Default 10 s. */
  firstRetryMs?: number;
  /** package.expiring fires this many days before a package expires. Default 7. */
  packageExpiringDays?: number;
  /** Attempts in flight at once in this process, over all endpoints. Default 16. */
  maxAttempts?: number;
}

/**
 * Accounts are all swept (for marks lost to a crash, and for packages expiring or expired) at start and then this
 * often.
 */
const SWEEP_MS = 5 * 60_000;

export class DeliveryWorker {
  private readonly owner = randomBytes(8).toString('hex');
  private readonly loops = new Map<string, EndpointLoop>();
  private readonly deps: LoopDeps;
  private readonly gates: EventGates;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private sweeping: Promise<void> | undefined;
  private lastSweep = 0;
  private stopped = false;

  constructor(private readonly o: DeliveryWorkerOptions) {
    const timeoutMs = o.timeoutMs ?? 10_000;
    this.gates = new EventGates({ webhooks: o.webhooks, writers: o.writers ?? [o.outbox], lowBalance: o.lowBalance, pollMs: o.pollMs });
    this.deps = {
      webhooks: o.webhooks,
      logger: o.logger,
      timeoutMs,
      firstRetryMs: o.firstRetryMs ?? FIRST_RETRY_MS,
      slots: new AttemptSlots(o.maxAttempts ?? 16),
      owner: this.owner,
      // Outlasts one attempt with room to record it; a crashed holder's endpoint is free again after this.
      leaseMs: timeoutMs + 5_000,
      stopped: () => this.stopped,
    };
  }

  /**
   * Writes every event from now on until the endpoints are first read (none waits for that read), then runs a round
   * every pollMs; endpoint changes refresh the gates at once.
   */
  start(): void {
    this.gates.start();
    const loop = () => {
      if (this.stopped) return;
      this.running = this.round()
        .catch((err: unknown) => this.o.logger.warn({ err: (err as Error).message }, 'webhook delivery round failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.o.pollMs ?? 1_000);
        });
    };
    loop();
  }

  /** Stops after the round under way and the attempts in flight (each recorded first). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.gates.stop();
    await this.running;
    await this.sweeping;
    await Promise.all([...this.loops.values()].map((l) => l.busy));
  }

  /** One round, then the deliveries it started, to their end (for tests: the running worker never waits on them). */
  async tick(): Promise<void> {
    await Promise.all(await this.round());
  }

  /**
   * Wants and hand-on, then each endpoint's loop woken; the package sweep, when due, runs beside the rounds. Returns
   * the loops' runs and the sweep, not waited on.
   */
  private async round(): Promise<Promise<void>[]> {
    const endpoints = await this.refreshWants();
    // No endpoint, no package event written: the sweep waits for the first endpoint (and then runs at once).
    const sweep = endpoints.length > 0 && Date.now() - this.lastSweep >= SWEEP_MS && this.sweeping === undefined;
    if (sweep) {
      this.lastSweep = Date.now();
      this.sweeping = this.sweepPackages()
        .catch((err: unknown) => this.o.logger.warn({ err: (err as Error).message }, 'package expiry sweep failed'))
        .finally(() => {
          this.sweeping = undefined;
        });
    }
    const sweeping = this.sweeping;
    await handOn(this.o.outbox, this.o.webhooks, sweep, () => this.stopped);
    const runs = this.stopped ? [] : endpoints.map((e) => this.loops.get(e.id)!.wake());
    await this.reportBacklog(endpoints).catch(() => undefined);
    return sweeping ? [...runs, sweeping] : runs;
  }

  /** Reads the endpoints, sets what the stores write from them, and keeps one loop per endpoint. */
  private async refreshWants(): Promise<WebhookEndpoint[]> {
    const endpoints = await this.gates.refresh();
    const ids = new Set(endpoints.map((e) => e.id));
    for (const id of this.loops.keys()) {
      if (ids.has(id)) continue;
      this.loops.delete(id);
      this.o.metrics?.webhookBacklog.remove({ endpoint: id });
      this.o.metrics?.webhookOldestSeconds.remove({ endpoint: id });
    }
    for (const e of endpoints) {
      const loop = this.loops.get(e.id);
      if (loop) loop.endpoint = e;
      else this.loops.set(e.id, new EndpointLoop(e, this.deps));
    }
    return endpoints;
  }

  /**
   * Writes every account's due package.expiring and package.expired events (the store writes each once, however
   * many processes sweep); no request causes them, so the sweep does.
   */
  async sweepPackages(): Promise<void> {
    const warnSeconds = (this.o.packageExpiringDays ?? 7) * 86_400;
    for (const id of await this.o.outbox.eventAccounts(true)) {
      if (this.stopped) return;
      await this.o.outbox.packageEvents(id, warnSeconds);
    }
  }

  /** Each endpoint's queue length and oldest pending age, as gauges. */
  private async reportBacklog(endpoints: readonly WebhookEndpoint[]): Promise<void> {
    const m = this.o.metrics;
    if (!m) return;
    const now = Date.now() / 1000;
    const all = await Promise.all(endpoints.map((e) => this.o.webhooks.backlog(e.id)));
    endpoints.forEach((e, i) => {
      m.webhookBacklog.set({ endpoint: e.id }, all[i].pending);
      m.webhookOldestSeconds.set({ endpoint: e.id }, all[i].oldestCreated === null ? 0 : Math.max(0, now - all[i].oldestCreated));
    });
  }
}
