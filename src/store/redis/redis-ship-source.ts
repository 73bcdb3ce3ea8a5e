/** The ledger shipper's port on Redis (lua/archive/): beside the store on its connection, not in it. */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import type { ShipSource } from '../ports/ship-source';
import type { UsageRecord } from '../records/metering';
import { compareCursor } from '../ids';
import { luaScript } from './lua-scripts';
import { defineScripts } from './define-scripts';
import { parseUsageEntry } from './redis-records';

export class RedisShipSource implements ShipSource {
  private readonly scripts;

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix = 'tm:',
  ) {
    this.scripts = defineScripts(redis, {
      tmShipLease: luaScript('archive/lease.lua'),
      tmShipRelease: luaScript('archive/release.lua'),
      tmShipAdvance: luaScript('archive/advance.lua'),
    });
  }

  private a(accountId: string, part: string): string {
    return `${this.prefix}{${accountId}}:${part}`;
  }

  accounts(): Promise<string[]> {
    return this.redis.zrange(`${this.prefix}accounts`, 0, -1);
  }

  async lease(accountId: string, owner: string, ms: number): Promise<boolean> {
    return Number(await this.scripts.tmShipLease([this.a(accountId, 'sl')], [owner, ms])) === 1;
  }

  async release(accountId: string, owner: string): Promise<void> {
    await this.scripts.tmShipRelease([this.a(accountId, 'sl')], [owner]);
  }

  async pending(accountId: string): Promise<boolean> {
    // One pipeline: the two keys share the account's slot.
    const replies = await this.redis
      .pipeline()
      .hget(this.a(accountId, 'sc'), 'c')
      .xrevrange(this.a(accountId, 'u'), '+', '-', 'COUNT', 1)
      .exec();
    const cursor = (replies?.[0]?.[1] as string | null) ?? '0-0';
    const last = (replies?.[1]?.[1] as [string, string[]][] | undefined)?.[0]?.[0];
    return last !== undefined && compareCursor(last, cursor) > 0;
  }

  async shipped(accountId: string): Promise<string> {
    return (await this.redis.hget(this.a(accountId, 'sc'), 'c')) ?? '0-0';
  }

  /**
   * Records after `after` that the daily rollups already hold (up to the rollup cursor `rc`, when the account has one):
   * shipped after the follower, so trimming behind the shipped cursor never waits on it.
   */
  async read(accountId: string, after: string, count: number): Promise<UsageRecord[]> {
    const rolled = await this.redis.hget(this.a(accountId, 'a'), 'rc');
    if (rolled !== null && compareCursor(rolled, after) <= 0) return [];
    const entries = await this.redis.xrange(this.a(accountId, 'u'), `(${after}`, rolled ?? '+', 'COUNT', count);
    return entries.map(([cursor, fields]) => parseUsageEntry(accountId, cursor, fields));
  }

  async advance(accountId: string, owner: string, cursor: string, n: number, keepFromMs: number | null): Promise<boolean> {
    const keys = [this.a(accountId, 'sl'), this.a(accountId, 'sc'), this.a(accountId, 'u'), this.a(accountId, 'a')];
    return Number(await this.scripts.tmShipAdvance(keys, [owner, cursor, n, keepFromMs ?? ''])) === 1;
  }

  async backlog(accountId: string): Promise<{ records: number; oldestMs: number | null }> {
    const stream = this.a(accountId, 'u');
    const [info, shipped] = await Promise.all([
      this.redis.xinfo('STREAM', stream).catch(() => null) as Promise<unknown[] | null>,
      this.redis.hmget(this.a(accountId, 'sc'), 'c', 'n'),
    ]);
    if (!info) return { records: 0, oldestMs: null };
    const at = info.indexOf('entries-added');
    const added = Number(at >= 0 ? info[at + 1] : info[info.indexOf('length') + 1]);
    const next = await this.redis.xrange(stream, `(${shipped[0] ?? '0-0'}`, '+', 'COUNT', 1);
    return { records: Math.max(0, added - Number(shipped[1] ?? 0)), oldestMs: next.length ? Number(next[0][0].split('-')[0]) : null };
  }

  /** Trims records before `beforeMs`, but none the rollup follower has yet to add (after `rc`, which only moves on). */
  async trim(accountId: string, beforeMs: number): Promise<void> {
    const rolled = await this.redis.hget(this.a(accountId, 'a'), 'rc');
    let minId = `${beforeMs}-0`;
    if (rolled !== null && compareCursor(rolled, minId) < 0) {
      const [ms, seq] = rolled.split('-');
      minId = `${ms}-${BigInt(seq) + 1n}`;
    }
    await this.redis.xtrim(this.a(accountId, 'u'), 'MINID', minId);
  }
}
