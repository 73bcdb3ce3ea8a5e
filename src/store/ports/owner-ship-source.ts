/**
 * The owners shipper's port onto the live response owners (Redis' day buckets): one lease for all processes, the
 * shipped day, a day's owners read a page at a time, and a shipped hash's life shortened to the hot window.
 */

/** One recorded id as shipped: a response's (its model and tokens) or an item's (model null; tokens its size, if recorded). */
export interface OwnerRow {
  id: string;
  /** The UTC day it was recorded in (days since the epoch). */
  day: number;
  accountId: string;
  model: string | null;
  tokens: number | null;
}

export interface OwnerShipSource {
  /** Hashes per day. */
  readonly shards: number;
  /** Takes or renews the shipping lease for `owner`; false while another shipper holds it. */
  lease(owner: string, ms: number): Promise<boolean>;
  /** Gives the lease up if `owner` holds it. */
  release(owner: string): Promise<void>;
  /** The newest day up to which every day is shipped; undefined: none yet. */
  shipped(): Promise<number | undefined>;
  /** A page of one shard of a day: about `count` ids, and the cursor to go on from ('0': the last page). */
  scan(day: number, shard: number, cursor: string, count: number): Promise<{ cursor: string; rows: OwnerRow[] }>;
  /**
   * Once PostgreSQL has committed the `n` distinct ids read from a shard of a day: its hash expires at `expireAtMs`,
   * only if it still holds exactly n ids. False: it changed (an id came late, or was forgotten): ship it again.
   */
  shorten(day: number, shard: number, n: number, expireAtMs: number): Promise<boolean>;
  /** Moves the shipped day forward to `day` (never back), only while `owner` holds the lease. False: the lease was lost. */
  advance(owner: string, day: number): Promise<boolean>;
}
