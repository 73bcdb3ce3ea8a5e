/** Builds the configured store: Redis when REDIS_URL is set, else the embedded memory store. */
import Redis from 'ioredis';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { MemoryStore } from './memory-store';
import { RedisStore, redisClientOptions } from './redis-store';
import type { Store } from './types';

export function createStore(config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'storeTimeoutMs'>, logger: Logger): Store {
  if (!config.redisUrl) return new MemoryStore();
  const client = new Redis(config.redisUrl, redisClientOptions(config.storeTimeoutMs));
  // Requests fail closed (503) while Redis is away and ioredis reconnects on its own; log each outage once.
  let down = false;
  client.on('error', (err) => {
    if (!down) logger.error({ err: err.message }, 'store unreachable');
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.info('store reachable again');
    down = false;
  });
  return new RedisStore(client, { prefix: config.redisPrefix });
}
