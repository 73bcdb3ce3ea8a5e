/**
 * The ledger archive as a Tokenmeter opens it: with LEDGER_DATABASE_URL, the PostgreSQL archive, its shipper running
 * beside the store, and the store's `usage` reading both homes; without it, a shipper only when
 * LEDGER_TRIM_AFTER_DAYS asks Redis to drop old records; else nothing.
 */
import type { MeterConfig } from '../config/options';
import { ConfigError } from '../config/options';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { ShipSource } from '../store/ports/ship-source';
import { isWholeStore, type ServingStore } from '../store/ports/store';
import { archivedUsage } from './archived-ledger';
import { PgLedgerArchive } from './ledger-archive';
import { ledgerStatus, type LedgerStatus } from './ledger-status';
import { LedgerShipper } from './shipper';

type ArchiveConfig = Pick<MeterConfig, 'ledgerDatabaseUrl' | 'ledgerHotHours' | 'ledgerRetentionMonths' | 'ledgerTrimAfterDays'>;

export interface OpenedArchive {
  /** The store, its ledger read from both homes when archived. */
  wrap<S extends ServingStore>(store: S): S;
  /** Starts the shipper, if there is one. */
  start(): void;
  /** The backlog, cursors and partitions (GET /admin/ledger). */
  status(): Promise<LedgerStatus>;
  close(): Promise<void>;
}

export function openLedgerArchive(config: ArchiveConfig, source: ShipSource | undefined, logger: Logger, metrics: Metrics): OpenedArchive {
  if (config.ledgerDatabaseUrl !== undefined && !source) {
    const detail = 'needs a Redis store (REDIS_URL): the archive ships the Redis ledger';
    throw new ConfigError(`invalid tokenmeter option ledgerDatabaseUrl: ${detail}`, 'ledgerDatabaseUrl', detail);
  }
  const archive = config.ledgerDatabaseUrl !== undefined ? new PgLedgerArchive(config.ledgerDatabaseUrl) : null;
  const shipper =
    source && (archive || config.ledgerTrimAfterDays !== undefined)
      ? new LedgerShipper({
          source,
          archive,
          hotHours: config.ledgerHotHours,
          trimAfterDays: config.ledgerTrimAfterDays,
          retentionMonths: config.ledgerRetentionMonths,
          logger,
          metrics,
        })
      : undefined;
  return {
    wrap: (store) => (archive && source && isWholeStore(store) ? { ...store, usage: archivedUsage(store, source, archive) } : store),
    start: () => shipper?.start(),
    status: () => ledgerStatus(source, archive),
    close: async () => {
      await shipper?.stop();
      await archive?.close();
    },
  };
}
