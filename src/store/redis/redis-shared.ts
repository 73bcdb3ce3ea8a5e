/**
 * What every part of the Redis store shares (redis-store.ts composes them): the connection, one key layout (described
 * in lua/README.md), the limit window and the budgets' clock.
 */
import type { Cluster, Redis } from 'ioredis';
import { DEFAULT_WINDOW_MS } from '../../limits/limits';

export interface RedisStoreOptions {
  /** Prefix of every key we write. Default `tm:`. */
  prefix?: string;
  /** Length of the rpm and tpm windows. Default 60 s. */
  limitWindowMs?: number;
  /**
   * The clock of the budgets' periods, in ms (the scripts take the periods' starts from it; leases and expiry keep
   * the server's TIME). Default Date.now.
   */
  now?: () => number;
  /** How often the rollup follower adds settled records to the daily rollups (redis-rollup-follower.ts). Default 1 s. */
  rollupIntervalMs?: number;
}

/** The names of the store's keys, under one prefix. */
export class KeyLayout {
  constructor(readonly prefix: string) {}

  /** A key of account `accountId`'s slot (hash tag `{<account id>}`). */
  slot(accountId: string, part: string): string {
    return `${this.prefix}{${accountId}}:${part}`;
  }

  /** A key outside any account's slot. */
  global(name: string): string {
    return `${this.prefix}${name}`;
  }

  /** A model's limit windows: its own slot `{m:<model id>}`, apart from every account's. */
  model(model: string): [string, string, string] {
    const base = `${this.prefix}{m:${model}}:`;
    return [`${base}lw`, `${base}lt`, `${base}lc`];
  }
}

export interface RedisShared {
  readonly redis: Redis | Cluster;
  readonly keys: KeyLayout;
  readonly windowMs: number;
  readonly now: () => number;
}

/** QUIT when connected (pending replies arrive first), else just drop the connection. */
export async function closeRedis(redis: Redis | Cluster): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}

export function redisShared(redis: Redis | Cluster, options: RedisStoreOptions = {}): RedisShared {
  return {
    redis,
    keys: new KeyLayout(options.prefix ?? 'tm:'),
    windowMs: options.limitWindowMs ?? DEFAULT_WINDOW_MS,
    now: options.now ?? Date.now,
  };
}
