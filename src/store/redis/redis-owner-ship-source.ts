/** The owners shipper's port on Redis (lua/archive/): the day buckets of redis-response-owners.ts. */
import type { Cluster, Redis } from 'ioredis';
import type { OwnerShipSource, OwnerRow } from '../ports/owner-ship-source';
import { luaScript } from './lua-scripts';
import { defineScripts } from './define-scripts';
import { dayKey, ownerRow, SHARDS, shipKeys } from './redis-response-owners';

export class RedisOwnerShipSource implements OwnerShipSource {
  readonly shards = SHARDS;
  private readonly scripts;
  private readonly keys: { lease: string; shipped: string };

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix = 'tm:',
  ) {
    this.keys = shipKeys(prefix);
    this.scripts = defineScripts(redis, {
      tmShipLease: luaScript('archive/lease.lua'),
      tmShipRelease: luaScript('archive/release.lua'),
      tmOwnersShorten: luaScript('archive/shorten.lua'),
      tmOwnersAdvance: luaScript('archive/advance-day.lua'),
    });
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    return Number(await this.scripts.tmShipLease([this.keys.lease], [owner, ms])) === 1;
  }

  async release(owner: string): Promise<void> {
    await this.scripts.tmShipRelease([this.keys.lease], [owner]);
  }

  async shipped(): Promise<number | undefined> {
    const day = await this.redis.get(this.keys.shipped);
    return day === null ? undefined : Number(day);
  }

  async scan(day: number, shard: number, cursor: string, count: number): Promise<{ cursor: string; rows: OwnerRow[] }> {
    const [next, flat] = await this.redis.hscan(dayKey(this.prefix, shard, day), cursor, 'COUNT', count);
    const rows: OwnerRow[] = [];
    for (let i = 0; i < flat.length; i += 2) rows.push(ownerRow(flat[i], day, flat[i + 1]));
    return { cursor: next, rows };
  }

  async shorten(day: number, shard: number, n: number, expireAtMs: number): Promise<boolean> {
    return Number(await this.scripts.tmOwnersShorten([dayKey(this.prefix, shard, day)], [n, expireAtMs])) === 1;
  }

  async advance(owner: string, day: number): Promise<boolean> {
    return Number(await this.scripts.tmOwnersAdvance([this.keys.lease, this.keys.shipped], [owner, day])) === 1;
  }
}
