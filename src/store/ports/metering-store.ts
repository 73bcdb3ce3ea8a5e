/**
 * The metering port, for the Meter (src/metering/metering.ts) and readiness: reservations with leases, and settlement
 * exactly once per request. A host that keeps balances in its own system implements this and KeyLookup alone.
 */
import type { ReserveRequest, ReserveResult, Settlement, SettleResult } from '../records/metering';

/** Where a store keeps its state: `memory`, in this process; `redis`, shared by every process on the same Redis. */
export type StoreKind = 'memory' | 'redis';

/**
 * Every check-and-change is atomic: in Redis one Lua script on the account's slot, in memory one synchronous step.
 * Expected outcomes (unknown key, short balance, disabled account) are returned values; a thrown error means the store
 * is unreachable, and the request is refused (503) rather than served unmetered.
 */
export interface MeteringStore {
  /**
   * tokenmeter's own stores say which they are; a host's store may leave it out. Only a `memory` store is trusted
   * never to be away: for any other, settlements it does not take are kept in the journal until it does.
   */
  readonly kind?: StoreKind;
  /** Reserves for a request; a request id that already holds a reservation has it replaced (dropped if refused). */
  reserve(request: ReserveRequest): Promise<ReserveResult>;
  /** Extends a reservation's lease; false when it is gone (settled, released or expired). */
  renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean>;
  release(accountId: string, requestId: string): Promise<void>;
  /**
   * Charges the account (and the key), drops the reservation and appends to the ledger in one step; exactly once per
   * request id: a settle retried after a lost reply, or replayed from the journal, answers `duplicate`.
   */
  settle(settlement: Settlement): Promise<SettleResult>;
  /** Resolves when the store answers; rejects when it does not (`/readyz`, and the wait at start). */
  ping(): Promise<void>;
}
