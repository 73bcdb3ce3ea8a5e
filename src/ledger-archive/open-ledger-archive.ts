/**
 * The ledger archive as a Tokenmeter opens it: with LEDGER_DATABASE_URL, the PostgreSQL archive, its shippers (the
 * ledger's and stored responses' owners') running beside the store, and the store's `usage` and the owners reading
 * both homes; without it, a shipper only when LEDGER_TRIM_AFTER_DAYS asks Redis to drop old records; else nothing.
 */
import type { MeterConfig } from '../config/options';
import { ConfigError } from '../config/options';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { OwnerShipSource } from '../store/ports/owner-ship-source';
import type { ResponseOwners } from '../store/ports/response-owners';
import type { ShipSource } from '../store/ports/ship-source';
import { boundStore, isWholeStore, type ServingStore, type Store } from '../store/ports/store';
import { archivedUsage } from './archived-ledger';
import { archivedOwners } from './archived-owners';
import { PgLedgerArchive } from './ledger-archive';
import { ledgerStatus, type LedgerStatus } from './ledger-status';
import { PgOwnersArchive, type OwnersArchive } from './owners-archive';
import { OwnersShipper } from './owners-shipper';
import { LedgerShipper } from './shipper';

type ArchiveConfig = Pick<MeterConfig, 'ledgerDatabaseUrl' | 'ledgerHotHours' | 'ledgerRetentionMonths' | 'ledgerTrimAfterDays'>;

export interface OpenedArchive {
  /** The store, its ledger read from both homes when archived. */
  wrap(store: Store): Store;
  wrap(store: ServingStore): ServingStore;
  /** Stored responses' owners, read from both homes when archived. */
  owners(live: ResponseOwners): ResponseOwners;
  /** Starts the shippers, if there are any. */
  start(): void;
  /** The backlog, cursors and partitions (GET /admin/ledger). */
  status(): Promise<LedgerStatus>;
  close(): Promise<void>;
}

export function openLedgerArchive(
  config: ArchiveConfig,
  sources: { ships?: ShipSource; ownerShips?: OwnerShipSource },
  logger: Logger,
  metrics: Metrics,
): OpenedArchive {
  const source = sources.ships;
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
  const owners: OwnersArchive | null = archive && new PgOwnersArchive(archive);
  const ownersShipper =
    owners && sources.ownerShips
      ? new OwnersShipper({ source: sources.ownerShips, archive: owners, hotHours: config.ledgerHotHours, logger })
      : undefined;
  const failed = metrics.storeErrors.labels({ op: 'response_owner_archive' });
  return {
    // The store's bound members (boundStore), not a spread of it: a class instance's methods live on its prototype.
    wrap: ((store: ServingStore) =>
      archive && source && isWholeStore(store)
        ? { ...boundStore(store), usage: archivedUsage(store, source, archive) }
        : store) as OpenedArchive['wrap'],
    owners: (live) => (owners ? archivedOwners(live, owners, { logger, failed: () => failed.inc() }) : live),
    start: () => {
      shipper?.start();
      ownersShipper?.start();
    },
    status: () => ledgerStatus(source, archive),
    close: async () => {
      await shipper?.stop();
      await ownersShipper?.stop();
      await archive?.close();
    },
  };
}
