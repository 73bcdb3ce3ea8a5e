/**
 * Limits failed console logins per account (by email, known or not) and per client address, in the shared store so
 * every process counts together. An attempt is counted before the password is checked and given back when it was
 * right, so no burst of concurrent guesses gets past the limit. Registrations have a budget of their own per address,
 * so signing up (which is never given back) cannot use up the address's logins.
 */
import { createHash } from 'node:crypto';
import type { SessionStore } from '../store/ports/session-store';

export interface LoginThrottleOptions {
  /** Failed attempts allowed per bucket in a window. Default 10. */
  maxFailures: number;
  /** The window. Default 15 minutes. */
  windowMs: number;
  /** Registrations allowed per address in each hour. Default 10. */
  registrationsPerHour: number;
}

const HOUR_MS = 3_600_000;

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
    return this.admitBuckets([`e:${digest(email)}`, `a:${digest(address)}`], this.options.windowMs, this.options.maxFailures);
  }

  /**
   * Counts a registration from this address (of a fresh email or a taken one, which could enumerate accounts) in the
   * address's registration bucket: never the failed-login one, so sign-ups lock no one out of logging in.
   */
  async admitRegistration(address: string): Promise<Admission> {
    return this.admitBuckets([`r:${digest(address)}`], HOUR_MS, this.options.registrationsPerHour);
  }

  /** The attempt succeeded: the account's window starts over, and the address gets its attempt back. */
  async succeeded(ticket: Ticket): Promise<void> {
    await Promise.all(ticket.buckets.map((b) => (b.startsWith('e:') ? this.store.clearAttempts(b) : this.store.refundAttempt(b))));
  }

  /** The attempt was not a failure after all (a request refused before any password was checked). */
  async refund(ticket: Ticket): Promise<void> {
    await Promise.all(ticket.buckets.map((b) => this.store.refundAttempt(b)));
  }

  private async admitBuckets(buckets: string[], windowMs: number, max: number): Promise<Admission> {
    const taken: string[] = [];
    for (const bucket of buckets) {
      const r = await this.store.takeAttempt(bucket, windowMs, max);
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
