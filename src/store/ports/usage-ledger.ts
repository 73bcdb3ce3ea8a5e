/** The ledger port, for the usage routes (the admin API's and the console's): reading the records settlement wrote. */
import type { UsageQuery, UsageRecord } from '../records/metering';
import type { DailyQuery, DailyUsage } from '../records/rollups';

export interface UsageLedger {
  /** The query's records, oldest first (see UsageQuery for paging by cursor). */
  usage(query: UsageQuery): Promise<UsageRecord[]>;
  /**
   * Daily totals per model and key from the rollups settlement keeps: a read per day, whatever the records. Both
   * stores have it; a host's own store may not (its daily totals are then summed from its ledger).
   */
  daily?(query: DailyQuery): Promise<DailyUsage>;
}
