/**
 * Reservations whose reply was lost: a RESERVE that failed in transit (the connection died or the command timed out)
 * may still have run in Redis, holding tokens for a request its client was told failed (503). Each is released by its
 * request id once the store answers again, retried with backoff, rather than left to its lease. Redis runs one
 * connection's commands in order, and ioredis resends an unanswered command before new ones when it reconnects, so a
 * release that succeeds lands after any RESERVE of that request. RELEASE is idempotent: one that held nothing is a no-op.
 */
import type { Logger } from '../observability/logger';

export interface LostReservesOptions {
  release: (accountId: string, requestId: string) => Promise<unknown>;
  logger: Logger;
  /** First retry delay, doubling up to 30 s. */
  baseMs: number;
  /** Most releases kept waiting; beyond them the lease returns the reservation. */
  max: number;
}

export class LostReserves {
  private readonly waiting = new Map<string, NodeJS.Timeout>();

  constructor(private readonly o: LostReservesOptions) {}

  /** A RESERVE of this request failed in transit: release it once the store answers. */
  add(accountId: string, requestId: string): void {
    if (this.waiting.has(requestId) || this.waiting.size >= this.o.max) return;
    this.attempt(accountId, requestId, 0);
  }

  stop(): void {
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
  }

  private attempt(accountId: string, requestId: string, n: number): void {
    const timer = setTimeout(
      () => {
        this.o.release(accountId, requestId).then(
          () => {
            this.waiting.delete(requestId);
            this.o.logger.info({ requestId }, 'released a reservation whose reply was lost');
          },
          () => this.attempt(accountId, requestId, n + 1),
        );
      },
      Math.min(this.o.baseMs * 2 ** n, 30_000),
    );
    timer.unref();
    this.waiting.set(requestId, timer);
  }
}
