/** Builds the configured stores: Redis (or Redis Cluster) when REDIS_URL is set, else the embedded memory stores. */
import Redis, { Cluster } from 'ioredis';
import type { MeterConfig } from '../config/options';
import type { Logger } from '../observability/logger';
import type { CommerceStore } from './ports/commerce-store';
import { MemoryCommerceStore } from './memory/memory-commerce-store';
import { MemorySessionStore } from './memory/memory-session-store';
import { MemoryStore } from './memory/memory-store';
import { RedisCommerceStore } from './redis/redis-commerce-store';
import { RedisSessionStore } from './redis/redis-session-store';
import { RedisStore, redisClientOptions } from './redis/redis-store';
import type { SessionStore } from './ports/session-store';
import type { WebhookStore } from './ports/webhook-store';
import { MemoryWebhookStore } from './memory/memory-webhook-store';
import { RedisWebhookStore } from './redis/redis-webhook-store';
import type { Store } from './ports/store';
import { MemoryResponseOwners } from './memory/memory-response-owners';
import { RedisResponseOwners } from './redis/redis-response-owners';
import type { ResponseOwners } from './ports/response-owners';
import type { ShipSource } from './ports/ship-source';
import { RedisShipSource } from './redis/redis-ship-source';

type StoreConfig = Pick<MeterConfig, 'redisUrl' | 'redisPrefix' | 'redisCluster' | 'storeTimeoutMs' | 'rateLimitWindowSeconds'>;

/** The metering store, and the console's session and commerce stores on the same connection. */
export interface Stores {
  store: Store;
  sessions: SessionStore;
  commerce: CommerceStore;
  /** Which account owns each stored response (the Responses API's state upstream). */
  responses: ResponseOwners;
  /** Webhook endpoints and their deliveries. */
  webhooks: WebhookStore;
  /** The ledger shipper's view of the Redis ledger (ledger-archive/); none in memory. */
  ships?: ShipSource;
}

export function createStores(config: StoreConfig, logger: Logger): Stores {
  const limitWindowMs = config.rateLimitWindowSeconds * 1000;
  if (!config.redisUrl)
    return {
      store: new MemoryStore({ limitWindowMs }),
      sessions: new MemorySessionStore(),
      commerce: new MemoryCommerceStore(),
      responses: new MemoryResponseOwners(),
      webhooks: new MemoryWebhookStore(),
    };
  const client = connect(config, config.redisUrl, logger);
  const prefix = config.redisPrefix;
  return {
    store: new RedisStore(client, { prefix, limitWindowMs }),
    sessions: new RedisSessionStore(client, { prefix }),
    commerce: new RedisCommerceStore(client, { prefix }),
    responses: new RedisResponseOwners(client, { prefix }),
    webhooks: new RedisWebhookStore(client, { prefix }),
    ships: new RedisShipSource(client, prefix),
  };
}

function connect(config: StoreConfig, url: string, logger: Logger): Redis | Cluster {
  const options = redisClientOptions(config.storeTimeoutMs);
  const client = config.redisCluster
    ? // Every script touches one hash tag's keys (an account's, a model's, a session's, a code's): one slot, so they run unchanged on a cluster.
      new Cluster([url], { enableOfflineQueue: false, clusterRetryStrategy: options.retryStrategy, redisOptions: options })
    : new Redis(url, options);
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
  return client;
}
