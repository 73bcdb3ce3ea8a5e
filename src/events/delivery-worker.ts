/**
 * The webhooks' delivery loop, apart from every request: each tick it tells the store which events to write (from the
 * endpoints configured), hands the accounts' outbox events to the endpoints' queues, and delivers each endpoint's
 * queue in order under that endpoint's lease, so two processes never deliver to one endpoint at once.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../observability/logger';
import type { EventOutbox } from '../store/ports/event-outbox';
import type { WebhookStore } from '../store/ports/webhook-store';
import { DEFAULT_EVENT_TYPES, eventBody, type Delivery, type EventType, type WebhookEndpoint } from '../store/records/events';
import { compareCursor } from '../store/ids';
import { FIRST_RETRY_MS, nextAttemptAt } from './backoff';
import { SIGNATURE_HEADER, signWebhook } from './signature';

export interface DeliveryWorkerOptions {
  outbox: EventOutbox;
  webhooks: WebhookStore;
  logger: Logger;
  /** balance.low's threshold for accounts without their own. */
  lowBalanceTokens: number;
  /** A receiver slower than this to answer counts as failed. Default 10000. */
  timeoutMs?: number;
  /** Time between ticks. Default 1000. */
  pollMs?: number;
  /** The first retry's delay (doubling after). Default 10 s. */
  firstRetryMs?: number;
  /** package.expiring fires this many days before a package expires. Default 7. */
  packageExpiringDays?: number;
}

/**
 * Accounts are all swept (for marks lost to a crash, and for packages expiring or expired) at start and then this
 * often.
 */
const SWEEP_MS = 5 * 60_000;
const BATCH = 100;

export class DeliveryWorker {
  private readonly owner = randomBytes(8).toString('hex');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastSweep = 0;
  private stopped = false;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;

  constructor(private readonly o: DeliveryWorkerOptions) {
    this.timeoutMs = o.timeoutMs ?? 10_000;
    // Outlasts one attempt with room to record it; a crashed holder's endpoint is free again after this.
    this.leaseMs = this.timeoutMs + 5_000;
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .catch((err: unknown) => this.o.logger.warn({ err: (err as Error).message }, 'webhook delivery tick failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.o.pollMs ?? 1_000);
        });
    };
    loop();
  }

  /** Stops after the tick under way (its attempt, if any, is recorded first). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One round: wants, hand-on, deliveries. */
  async tick(): Promise<void> {
    const endpoints = await this.o.webhooks.listEndpoints();
    const wanted = new Set<EventType>(endpoints.flatMap((e) => expand(e.types)));
    this.o.outbox.wantEvents({ types: wanted, lowBalanceTokens: this.o.lowBalanceTokens });
    const sweep = Date.now() - this.lastSweep >= SWEEP_MS;
    if (sweep) {
      this.lastSweep = Date.now();
      if (wanted.has('package.expiring') || wanted.has('package.expired')) await this.sweepPackages();
    }
    await this.handOn(endpoints, sweep);
    for (const e of endpoints) if (!this.stopped) await this.deliverQueue(e);
  }

  /**
   * Moves outbox events to the queues of the endpoints that want them, oldest first across accounts (cursors are
   * the store's time-ordered stream ids), then drops them from the outboxes.
   */
  private async handOn(endpoints: WebhookEndpoint[], sweep: boolean): Promise<void> {
    let accounts = await this.o.outbox.eventAccounts(sweep);
    while (accounts.length > 0 && !this.stopped) {
      const read = await Promise.all(accounts.map((id) => this.o.outbox.readEvents(id, BATCH)));
      const events = read.flat().sort((a, b) => compareCursor(a.cursor, b.cursor));
      for (const event of events) {
        const body = eventBody(event);
        for (const e of endpoints)
          if (expand(e.types).includes(event.type)) await this.o.webhooks.enqueue(e.id, { eventId: event.id, type: event.type, body });
      }
      await Promise.all(
        accounts.map((id, i) =>
          this.o.outbox.dropEvents(
            id,
            read[i].map((e) => e.cursor),
          ),
        ),
      );
      accounts = accounts.filter((_, i) => read[i].length === BATCH);
    }
  }

  /**
   * Writes every account's due package.expiring and package.expired events (the store writes each once, however
   * many processes sweep); no request causes them, so the sweep does. Call after a tick has set what is wanted.
   */
  async sweepPackages(): Promise<void> {
    const warnSeconds = (this.o.packageExpiringDays ?? 7) * 86_400;
    for (const id of await this.o.outbox.eventAccounts(true)) {
      if (this.stopped) return;
      await this.o.outbox.packageEvents(id, warnSeconds);
    }
  }

  /** Delivers the endpoint's due head, and the next, until one fails or none is due; under the endpoint's lease. */
  private async deliverQueue(endpoint: WebhookEndpoint): Promise<void> {
    if (!(await this.o.webhooks.lease(endpoint.id, this.owner, this.leaseMs))) return;
    try {
      for (;;) {
        const head = await this.o.webhooks.head(endpoint.id);
        if (!head || head.nextAttemptMs > Date.now() || this.stopped) return;
        if (!(await this.attempt(endpoint, head))) return;
        if (!(await this.o.webhooks.lease(endpoint.id, this.owner, this.leaseMs))) return;
      }
    } finally {
      await this.o.webhooks.unlease(endpoint.id, this.owner);
    }
  }

  /** One POST; true when the receiver took it (2xx). */
  private async attempt(endpoint: WebhookEndpoint, d: Delivery): Promise<boolean> {
    const at = Math.floor(Date.now() / 1000);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'tokenmeter-webhooks',
          [SIGNATURE_HEADER]: signWebhook(endpoint.secret, d.body, at),
        },
        body: d.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      await res.body?.cancel();
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (err) {
      error = errorText(err);
    }
    const delivered = error === null;
    const retryAt = delivered
      ? undefined
      : nextAttemptAt(d.attempts.length + 1, d.created * 1000, Date.now(), this.o.firstRetryMs ?? FIRST_RETRY_MS);
    const outcome = delivered
      ? { kind: 'delivered' as const }
      : retryAt === undefined
        ? { kind: 'failed' as const }
        : { kind: 'retry' as const, retryAtMs: retryAt };
    await this.o.webhooks.recordAttempt(d.id, { at, status, error }, outcome);
    if (!delivered) this.o.logger.warn({ endpoint: endpoint.id, delivery: d.id, status, error }, 'webhook delivery failed');
    return delivered;
  }
}

/** An endpoint's types with `*` spelled out. */
export function expand(types: readonly (EventType | '*')[]): EventType[] {
  return types.flatMap((t) => (t === '*' ? DEFAULT_EVENT_TYPES : [t]));
}

function errorText(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}
