/** The ledger port, for the usage routes (the admin API's and the console's): reading the records settlement wrote. */
import type { UsageQuery, UsageRecord } from '../records/metering';

export interface UsageLedger {
  /** The query's records, oldest first (see UsageQuery for paging by cursor). */
  usage(query: UsageQuery): Promise<UsageRecord[]>;
}
