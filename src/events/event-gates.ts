/**
 * The event gates: keeps what the stores write (wantEvents) in step with the endpoints configured. Told of each change
 * at once (an endpoint's change is answered only once this process applied it, WebhookStore.watchEndpoints), and
 * reading the endpoints again every pollMs in case a message was lost. Until the first read, every event is written.
 * The delivery worker runs one over its own outbox; with the delivery in a thread of its own, the request path's
 * process runs one over the requests' store, so its gates never wait on a message from the thread.
 */
import type { EventOutbox } from '../store/ports/event-outbox';
import type { WebhookBackend } from '../store/ports/webhook-store';
import type { LowBalanceDefault, WebhookEndpoint } from '../store/records/events';
import { wantsFor } from './event-wants';

export interface EventGatesOptions {
  webhooks: Pick<WebhookBackend, 'listEndpoints' | 'watchEndpoints'>;
  /** The stores whose steps write events, told what to write. */
  writers: readonly Pick<EventOutbox, 'wantEvents'>[];
  /** balance.low's threshold for accounts without their own. */
  lowBalance: LowBalanceDefault;
  /** Time between reads. Default 1000. */
  pollMs?: number;
}

export class EventGates {
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => Promise<void>) | undefined;
  /** Reads of the endpoints, numbered: one that started earlier never overwrites a later one's. */
  private asked = 0;
  private applied = 0;

  constructor(private readonly o: EventGatesOptions) {}

  /** Every event is written from now on until the endpoints are first read (none waits for that read). */
  start(): void {
    this.apply(undefined);
    this.unwatch = this.o.webhooks.watchEndpoints(async () => {
      await this.refresh();
    });
    // Its own timer, so a long delivery round never stretches the gates' bound.
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.o.pollMs ?? 1_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.unwatch?.();
  }

  /** Reads the endpoints and sets what the stores write from them; returns the endpoints read. */
  async refresh(): Promise<WebhookEndpoint[]> {
    const asked = ++this.asked;
    const endpoints = await this.o.webhooks.listEndpoints();
    if (asked > this.applied) {
      this.applied = asked;
      this.apply(endpoints);
    }
    return endpoints;
  }

  private apply(endpoints: readonly WebhookEndpoint[] | undefined): void {
    const wants = wantsFor(endpoints, this.o.lowBalance);
    for (const w of this.o.writers) w.wantEvents(wants);
  }
}
