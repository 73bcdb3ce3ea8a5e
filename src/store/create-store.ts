/** Builds the configured store: Redis (or Redis Cluster) when REDIS_URL is set, else the embedded memory store. */
import Redis, { Cluster } from 'ioredis';
import type { Config } from '../config/config';
import type { Logger } from '../observability/logger';
import { MemoryStore } from './memory-store';
import { RedisStore, redisClientOptions } from './redis-store';
import type { Store } from './types';

export function createStore(
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'redisCluster' | 'storeTimeoutMs' | 'limitWindowMs'>,
  logger: Logger,
): Store {
  if (!config.redisUrl) return new MemoryStore({ limitWindowMs: config.limitWindowMs });
  const options = redisClientOptions(config.storeTimeoutMs);
  const client = config.redisCluster
    ? // Every script touches one account's keys (or one model's), all under one hash tag: one slot, so they run unchanged on a cluster.
      new Cluster([config.redisUrl], { enableOfflineQueue: false, clusterRetryStrategy: options.retryStrategy, redisOptions: options })
    : new Redis(config.redisUrl, options);
  // Requests fail closed (503) while Redis is away and ioredis reconnects on its own; log each outage once.
  let down = false;
  client.on('error', (err: Error) => {
    if (!down) logger.error({ err: err.message }, 'store unreachable');
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info('store reachable again');
    down = false;
  });
  return new RedisStore(client, { prefix: config.redisPrefix, limitWindowMs: config.limitWindowMs });
}
