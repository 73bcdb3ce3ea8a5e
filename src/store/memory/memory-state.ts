/**
 * What every part of the memory store shares (memory-store.ts composes them): its accounts and keys, which events to
 * write, the clock and the limit window, and the steps on an account that several parts take (what it offers, dropping
 * lapsed reservations).
 */
import { SettledMarks } from './memory-rollups';
import { unholdBudget } from './memory-budgets';
import type { Account, Key, Reservation } from './memory-records';
import { NO_EVENTS, type EventWants } from '../records/events';

export class MemoryState {
  readonly accounts = new Map<string, Account>();
  readonly keys = new Map<string, Key>();
  /** Which events to write (memory-outbox.ts); none until an endpoint wants some. */
  wants: EventWants = NO_EVENTS;

  constructor(
    readonly now: () => number,
    readonly windowMs: number,
    private readonly dedupMs: number,
  ) {}

  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** What the account offers now: unexpired package remainders, less debt and open reservations. */
  available(acc: Account): number {
    return this.unspent(acc) - acc.debt - acc.reserved;
  }

  /** What the account's live packages hold. */
  unspent(acc: Account): number {
    const now = this.seconds();
    return acc.packages.reduce((sum, p) => (p.expiresAt === null || p.expiresAt > now ? sum + p.remaining : sum), 0);
  }

  /** Drops expired reservations. */
  purge(acc: Account): void {
    const now = this.now();
    for (const [id, held] of acc.reservations) if (held.deadline <= now) this.dropReservation(acc, id);
  }

  /** A new account's settled markers, remembered for the dedup window. */
  settledMarks(): SettledMarks {
    return new SettledMarks(this.dedupMs);
  }

  /** Drops the request's reservation, giving back what it held; the reservation, or undefined when it held none. */
  dropReservation(acc: Account, requestId: string): Reservation | undefined {
    const held = acc.reservations.get(requestId);
    if (!held) return undefined;
    acc.reservations.delete(requestId);
    acc.reserved -= held.amount;
    const key = held.keyId === null ? undefined : this.keys.get(held.keyId);
    if (key) key.reserved -= held.amount;
    if (held.budgets) {
      unholdBudget(acc, held.budgets.account, held.amount);
      unholdBudget(key, held.budgets.key, held.amount);
    }
    return held;
  }

  keyOf(keyId: string | null): Key | undefined {
    return keyId === null ? undefined : this.keys.get(keyId);
  }
}
