/**
 * One endpoint's delivery loop: its queue in order, one attempt in flight, each attempt under the endpoint's lease
 * (so two processes never deliver to one endpoint at once) and holding one of the process's attempt slots. Each
 * endpoint has its own, so a receiver that holds or refuses delays only its own queue.
 */
import type { Logger } from '../observability/logger';
import type { WebhookBackend } from '../store/ports/webhook-store';
import type { WebhookEndpoint } from '../store/records/events';
import type { AttemptSlots } from './attempt-slots';
import { dueNow, postDeliveries, type PostOptions } from './post-deliveries';

export interface LoopDeps extends PostOptions {
  webhooks: WebhookBackend;
  logger: Logger;
  slots: AttemptSlots;
  /** This process's lease owner id. */
  owner: string;
  leaseMs: number;
  stopped(): boolean;
}

export class EndpointLoop {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    /** Kept current by the worker (an endpoint's configuration is read each round). */
    public endpoint: WebhookEndpoint,
    private readonly d: LoopDeps,
  ) {}

  /**
   * Delivers what is due now; while a run is under way, runs again once it ends (events may have come meanwhile).
   * Resolves when this endpoint's run ends; never rejects.
   */
  wake(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** The run under way, if any (stop waits for it). */
  get busy(): Promise<void> | undefined {
    return this.running;
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.drain();
      } catch (err) {
        this.d.logger.warn({ endpoint: this.endpoint.id, err: (err as Error).message }, 'webhook delivery loop failed');
      }
    } while (this.again && !this.d.stopped());
  }

  /** Delivers the due head (or batch), then the next, until one fails or none is due. */
  private async drain(): Promise<void> {
    const { webhooks, owner, leaseMs, slots } = this.d;
    const id = this.endpoint.id;
    const limit = this.endpoint.batch ?? 1;
    // Looked at before any lease: an endpoint with nothing due costs one read.
    if (dueNow(this.endpoint, await webhooks.heads(id, 1), Date.now()).length === 0) return;
    let leased = false;
    try {
      for (;;) {
        await slots.acquire();
        try {
          if (this.d.stopped()) return;
          // Taken or extended right before each attempt, so time spent waiting for a slot never outlives it.
          if (!(await webhooks.lease(id, owner, leaseMs))) return;
          leased = true;
          const due = dueNow(this.endpoint, await webhooks.heads(id, limit), Date.now());
          if (due.length === 0 || !(await postDeliveries(this.d, this.endpoint, due))) return;
        } finally {
          slots.release();
        }
      }
    } finally {
      if (leased) await webhooks.unlease(id, owner).catch(() => undefined);
    }
  }
}
