/**
 * The outbox port, for the webhooks' delivery worker (src/events/): each account's events, written by the store in
 * the same atomic step as their cause (a settlement, a grant, a key's creation…), read in order and dropped once
 * handed to the endpoints' queues.
 */
import type { EventWants, OutboxEvent } from '../records/events';

export interface EventOutbox {
  /** Which events to write from now on (in this process); NO_EVENTS, the default, writes none. Not a store call. */
  wantEvents(wants: EventWants): void;
  /**
   * Accounts whose outbox may hold events: those marked when an event was written, or with `sweep` every account
   * (after a crash between an event's write and its mark, the first sweep of the next start finds it).
   */
  eventAccounts(sweep: boolean): Promise<string[]>;
  /** The account's oldest events, at most `limit`. */
  readEvents(accountId: string, limit: number): Promise<OutboxEvent[]>;
  /** Drops handed-on events; the account's mark goes when its outbox is empty. */
  dropEvents(accountId: string, cursors: readonly string[]): Promise<void>;
  /**
   * Writes the account's package.expiring (a package with tokens left expires within `warnSeconds`) and
   * package.expired (it has expired) events, when wanted, each once per package however many processes sweep: the
   * package's marker is checked and set in the step that writes its event. Time is the store's clock.
   */
  packageEvents(accountId: string, warnSeconds: number): Promise<void>;
  /** Sets the account's balance.low threshold (null: the configured default). False for an unknown account. */
  setLowBalance(accountId: string, tokens: number | null): Promise<boolean>;
}
