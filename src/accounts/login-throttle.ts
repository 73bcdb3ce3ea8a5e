/**
 * Limits failed console logins per account (by email, known or not) and per client address, in the shared store so
 * every process counts together. An attempt is counted before the password is checked and given back when it was
 * right, so no burst of concurrent guesses gets past the limit.
 */
import { createHash } from 'node:crypto';
import type { SessionStore } from '../store/ports/session-store';

export interface LoginThrottleOptions {
  /** Failed attempts allowed per bucket in a window. Default 10. */
  maxFailures: number;
  /** The window. Default 15 minutes. */
  windowMs: number;
}

export type Admission = { admitted: true; ticket: Ticket } | { admitted: false; retryAfterSeconds: number };

/** The buckets an admitted attempt was counted in. */
export interface Ticket {
  buckets: string[];
}

export class LoginThrottle {
  constructor(
    private readonly store: SessionStore,
    private readonly options: LoginThrottleOptions,
  ) {}

  /** Counts an attempt for this email from this address, or refuses it with the seconds until it may be retried. */
  async admit(email: string, address: string): Promise<Admission> {
    return this.admitBuckets([`e:${digest(email)}`, `a:${digest(address)}`]);
  }

  /** Counts an attempt against this address alone (registrations of taken emails, which could enumerate accounts). */
  async admitAddress(address: string): Promise<Admission> {
    return this.admitBuckets([`a:${digest(address)}`]);
  }

  /** The attempt succeeded: the account's window starts over, and the address gets its attempt back. */
  async succeeded(ticket: Ticket): Promise<void> {
    await Promise.all(ticket.buckets.map((b) => (b.startsWith('e:') ? this.store.clearAttempts(b) : this.store.refundAttempt(b))));
  }

  /** The attempt was not a failure after all (a request refused before any password was checked). */
  async refund(ticket: Ticket): Promise<void> {
    await Promise.all(ticket.buckets.map((b) => this.store.refundAttempt(b)));
  }

  private async admitBuckets(buckets: string[]): Promise<Admission> {
    const taken: string[] = [];
    for (const bucket of buckets) {
      const r = await this.store.takeAttempt(bucket, this.options.windowMs, this.options.maxFailures);
      if (!r.allowed) {
        // Give back what this refused attempt already counted elsewhere: a refusal is not a guess.
        await Promise.all(taken.map((b) => this.store.refundAttempt(b)));
        return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(r.retryAfterMs / 1000)) };
      }
      taken.push(bucket);
    }
    return { admitted: true, ticket: { buckets: taken } };
  }
}

/** Buckets are named by digest, so no email or address is written to the store in the clear. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 32);
}
