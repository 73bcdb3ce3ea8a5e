/**
 * The owners shipper: beside the ledger shipper, never on the request path, it copies each past day of stored
 * responses' owners from Redis' day buckets into PostgreSQL, one shard hash and one page at a time. Only once
 * PostgreSQL committed a hash's ids is its life shortened to the hot window (its day's end + LEDGER_HOT_HOURS), and
 * only once every hash of the day was is the shipped day moved past it. Shipped twice (a crash between), a day is
 * stored once. One shipper at a time (a lease), any process takes over. PostgreSQL down: nothing is shortened or
 * moved, Redis keeps every owner its 30 days, the next pass tries again.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger';
import { Repeating } from './repeating';
import type { OwnerShipSource } from '../store/ports/owner-ship-source';
import { RESPONSE_OWNER_DAYS } from '../store/ports/response-owners';
import type { OwnersArchive } from './owners-archive';

const DAY_MS = 86_400_000;
/** A day is shipped this long after it ends: answers recorded by a process whose clock runs behind land first. */
const GRACE_MS = 10 * 60_000;
/** Every this many passes (and the first), months past the owners' 30 days are dropped from PostgreSQL. */
const SWEEP = 60;

export interface OwnersShipperOptions {
  source: OwnerShipSource;
  archive: OwnersArchive;
  /** Hours a shipped day stays in Redis after it ends (LEDGER_HOT_HOURS). */
  hotHours: number;
  logger: Logger;
  /** Ids per page. Default 1000. */
  batch?: number;
  /** Pause between passes. Default 60 s (each day is shipped once, after it ends). */
  intervalMs?: number;
  /** How long the lease lasts unless renewed (each page renews it). Default 30 s. */
  leaseMs?: number;
  now?: () => number;
}

export class OwnersShipper {
  private readonly owner = randomUUID();
  private readonly now: () => number;
  private readonly loop: Repeating;
  private passes = 0;
  private leased = false;

  constructor(private readonly o: OwnersShipperOptions) {
    this.loop = new Repeating(
      () => this.pass(),
      this.o.intervalMs ?? 60_000,
      (err) => this.o.logger.warn({ err: err.message }, 'response owners not shipped; Redis keeps them, retrying'),
    );
    this.now = o.now ?? Date.now;
  }

  start(): void {
    this.loop.start();
  }

  /** Stops after the page in hand, and gives the lease up. */
  async stop(): Promise<void> {
    await this.loop.stop();
    if (this.leased) await this.o.source.release(this.owner).catch(() => {});
    this.leased = false;
  }

  /** Ships every day that has ended and is not shipped yet, oldest first, while this shipper holds the lease. */
  async pass(): Promise<void> {
    const { source, archive } = this.o;
    const sweep = this.passes++ % SWEEP === 0;
    const today = Math.floor(this.now() / DAY_MS);
    const shipped = (await source.shipped()) ?? -Infinity;
    for (let day = Math.max(shipped + 1, today - RESPONSE_OWNER_DAYS); (day + 1) * DAY_MS + GRACE_MS <= this.now(); day++) {
      if (this.loop.stopped || !(await this.lease())) return;
      let ids = 0;
      for (let shard = 0; shard < source.shards; shard++) {
        const n = await this.shipShard(day, shard);
        if (n === undefined) return;
        ids += n;
      }
      if (!(await source.advance(this.owner, day))) return;
      if (ids > 0) this.o.logger.info({ day: new Date(day * DAY_MS).toISOString().slice(0, 10), ids }, 'response owners shipped');
    }
    if (sweep) {
      const dropped = await archive.dropBefore(today - RESPONSE_OWNER_DAYS);
      if (dropped.length) this.o.logger.info({ partitions: dropped }, 'response owners archive: months past 30 days dropped');
    }
  }

  /** One shard of a day into PostgreSQL, then its hash's life shortened: the ids shipped, or undefined to stop here. */
  private async shipShard(day: number, shard: number): Promise<number | undefined> {
    const { source, archive } = this.o;
    const ids = new Set<string>();
    let cursor = '0';
    do {
      const page = await source.scan(day, shard, cursor, this.o.batch ?? 1000);
      await archive.store(page.rows);
      for (const r of page.rows) ids.add(r.id);
      cursor = page.cursor;
      if (this.loop.stopped || !(await this.lease())) return undefined;
    } while (cursor !== '0');
    const expireAtMs = (day + 1) * DAY_MS + this.o.hotHours * 3_600_000;
    if (await source.shorten(day, shard, ids.size, expireAtMs)) return ids.size;
    this.o.logger.info({ day, shard }, 'response owners recorded or forgotten while shipped: shipped again next pass');
    return undefined;
  }

  private async lease(): Promise<boolean> {
    this.leased = await this.o.source.lease(this.owner, this.o.leaseMs ?? 30_000);
    return this.leased;
  }
}
