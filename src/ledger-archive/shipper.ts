/**
 * The ledger shipper: beside the store, never on the request path, it copies each account's ledger records into the
 * archive, oldest first, in batches: PostgreSQL commits a batch, then the account's shipped cursor moves past it and
 * the stream is trimmed behind it (keeping LEDGER_HOT_HOURS). Exactly once: a batch shipped again after a crash
 * between the two is skipped by the archive; one shipper per account at a time (a lease), any process can take over.
 * PostgreSQL down: the batch fails, nothing moves, Redis keeps everything, the next pass tries again. Without an
 * archive it only trims, when LEDGER_TRIM_AFTER_DAYS says so.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger';
import { Repeating } from './repeating';
import type { Metrics } from '../observability/metrics';
import type { ShipSource } from '../store/ports/ship-source';
import type { LedgerArchive } from './ledger-archive';

/** Every this many passes, idle accounts are visited too (trimming ages out) and retention runs. */
const SWEEP = 60;

export interface ShipperOptions {
  source: ShipSource;
  /** Null: no archive (then only `trimAfterDays` trims). */
  archive: LedgerArchive | null;
  /** With an archive: hours of shipped records Redis keeps. */
  hotHours: number;
  /** Without an archive: days of records Redis keeps; undefined: all. */
  trimAfterDays?: number;
  /** With an archive: months PostgreSQL keeps (whole partitions dropped); undefined: all. */
  retentionMonths?: number;
  logger: Logger;
  metrics?: Pick<Metrics, 'ledgerBacklog' | 'ledgerOldestUnshipped'>;
  /** Records per batch. Default 1000. */
  batch?: number;
  /** Pause between passes over the accounts. Default 1 s. */
  intervalMs?: number;
  /** How long a lease lasts unless renewed (each batch renews it). Default 30 s. */
  leaseMs?: number;
  now?: () => number;
}

export class LedgerShipper {
  private readonly owner = randomUUID();
  private readonly batch: number;
  private readonly now: () => number;
  private readonly loop: Repeating;
  private passes = 0;
  /** The accounts whose lease this shipper took: given up on stop, so another process takes over at once. */
  private readonly leased = new Set<string>();

  constructor(private readonly o: ShipperOptions) {
    this.loop = new Repeating(
      () => this.pass(),
      this.o.intervalMs ?? 1000,
      (err) => this.o.logger.warn({ err: err.message }, 'ledger shipping failed; retrying'),
    );
    this.batch = o.batch ?? 1000;
    this.now = o.now ?? Date.now;
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the batch in hand, and gives its leases up. */
  async stop(): Promise<void> {
    await this.loop.stop();
    for (const id of this.leased) await this.o.source.release(id, this.owner).catch(() => {});
    this.leased.clear();
  }

  /**
   * One pass over every account: ship what is new (an idle account costs one round trip), then the backlog's metrics.
   * Every SWEEP passes (and the first), also every account's hot-window trimming, or without an archive its
   * LEDGER_TRIM_AFTER_DAYS trimming, and retention.
   */
  async pass(): Promise<void> {
    const sweep = this.passes++ % SWEEP === 0;
    let backlog = 0;
    let oldest: number | null = null;
    for (const id of await this.o.source.accounts()) {
      if (this.loop.stopped) return;
      if (this.o.archive) {
        const pending = await this.o.source.pending(id);
        if (pending || sweep)
          await this.ship(id, this.o.archive).catch((err: Error) =>
            this.o.logger.warn({ account: id, err: err.message }, 'ledger batch not shipped; Redis keeps it'),
          );
        if (!pending && !sweep) continue;
        const b = await this.o.source.backlog(id);
        backlog += b.records;
        if (b.oldestMs !== null && (oldest === null || b.oldestMs < oldest)) oldest = b.oldestMs;
      } else if (this.o.trimAfterDays !== undefined && sweep) {
        await this.o.source.trim(id, this.now() - this.o.trimAfterDays * 86_400_000);
      }
    }
    this.o.metrics?.ledgerBacklog.set(backlog);
    this.o.metrics?.ledgerOldestUnshipped.set(oldest === null ? 0 : Math.max(0, (this.now() - oldest) / 1000));
    if (this.o.archive && this.o.retentionMonths !== undefined && sweep) {
      const d = new Date(this.now());
      const keepFrom = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - this.o.retentionMonths + 1, 1) / 1000;
      const dropped = await this.o.archive.dropBefore(keepFrom);
      if (dropped.length) this.o.logger.info({ partitions: dropped }, 'ledger archive: months past retention dropped');
    }
  }

  /** Ships one account's records while it holds the lease, a batch at a time, until caught up. */
  private async ship(accountId: string, archive: LedgerArchive): Promise<void> {
    const leaseMs = this.o.leaseMs ?? 30_000;
    let cursor: string | undefined;
    while (!this.loop.stopped && (await this.o.source.lease(accountId, this.owner, leaseMs))) {
      this.leased.add(accountId);
      // Read once the lease is ours: a previous holder may have moved it.
      cursor ??= await this.o.source.shipped(accountId);
      const records = await this.o.source.read(accountId, cursor, this.batch);
      await archive.store(records);
      const last = records.length ? records[records.length - 1].cursor : cursor;
      const keepFrom = this.now() - this.o.hotHours * 3_600_000;
      if (!(await this.o.source.advance(accountId, this.owner, last, records.length, keepFrom))) return;
      cursor = last;
      if (records.length < this.batch) return;
    }
  }
}
