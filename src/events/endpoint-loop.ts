/**
 * One endpoint's delivery loop: its queue in order, one attempt in flight, each attempt under the endpoint's lease
 * (so two processes never deliver to one endpoint at once) and holding one of the process's attempt slots. Each
 * endpoint has its own, so a receiver that holds or refuses delays only its own queue.
 */
import type { Logger } from '../observability/logger';
import type { WebhookBackend } from '../store/ports/webhook-store';
import type { Delivery, WebhookEndpoint } from '../store/records/events';
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

/** Deliveries read ahead from the queue's head per read. */
const PREFETCH = 20;

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

  /**
   * Delivers the due head (or batch), then the next, until one fails or none is due. The queue's head is read ahead
   * (PREFETCH at a time) and the lease renewed only when half its margin has passed: a fast receiver costs one POST
   * and one write per attempt. Reading ahead is safe under the lease: only its holder takes deliveries off the
   * queue, and new ones join at its end.
   */
  private async drain(): Promise<void> {
    const { webhooks, owner, leaseMs, timeoutMs, slots } = this.d;
    const id = this.endpoint.id;
    const limit = Math.max(this.endpoint.batch ?? 1, PREFETCH);
    // Looked at before any lease: an endpoint with nothing due costs one read.
    if (dueNow(this.endpoint, await webhooks.heads(id, 1), Date.now()).length === 0) return;
    // A lease renewed at t outlasts an attempt begun before t + (leaseMs - timeoutMs) with room to record it.
    const renewAfterMs = (leaseMs - timeoutMs) / 2;
    let leasedAt: number | undefined;
    let ahead: Delivery[] = [];
    try {
      for (;;) {
        await slots.acquire();
        try {
          if (this.d.stopped()) return;
          if (leasedAt === undefined || Date.now() - leasedAt > renewAfterMs) {
            const asked = Date.now();
            if (!(await webhooks.lease(id, owner, leaseMs))) return;
            leasedAt = asked;
          }
          if (ahead.length < (this.endpoint.batch ?? 1)) ahead = await webhooks.heads(id, limit);
          const due = dueNow(this.endpoint, ahead, Date.now());
          if (due.length === 0 || !(await postDeliveries(this.d, this.endpoint, due))) return;
          ahead = ahead.slice(due.length);
        } finally {
          slots.release();
        }
      }
    } finally {
      if (leasedAt !== undefined) await webhooks.unlease(id, owner).catch(() => undefined);
    }
  }
}
