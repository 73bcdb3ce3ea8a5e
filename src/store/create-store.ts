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
import { RedisOutbox } from './redis/redis-outbox';
import { closeRedis, redisShared } from './redis/redis-shared';
import { RedisStore, redisClientOptions } from './redis/redis-store';
import type { SessionStore } from './ports/session-store';
import type { WebhookBackend, WebhookStore } from './ports/webhook-store';
import { MemoryWebhookStore } from './memory/memory-webhook-store';
import { RedisWebhookStore } from './redis/redis-webhook-store';
import type { Store } from './ports/store';
import { MemoryResponseOwners } from './memory/memory-response-owners';
import { RedisResponseOwners } from './redis/redis-response-owners';
import type { ResponseOwners } from './ports/response-owners';
import type { EventOutbox } from './ports/event-outbox';
import type { ShipSource } from './ports/ship-source';
import { RedisShipSource } from './redis/redis-ship-source';
import type { OwnerShipSource } from './ports/owner-ship-source';
import { RedisOwnerShipSource } from './redis/redis-owner-ship-source';

type StoreConfig = Pick<
  MeterConfig,
  'redisUrl' | 'redisPrefix' | 'redisCluster' | 'storeTimeoutMs' | 'rateLimitWindowSeconds' | 'ledgerDatabaseUrl' | 'ledgerHotHours'
>;

/** The metering store, and the console's session and commerce stores on the same connection. */
export interface Stores {
  store: Store;
  sessions: SessionStore;
  commerce: CommerceStore;
  /** Which account owns each stored response (the Responses API's state upstream). */
  responses: ResponseOwners;
  /** Webhook endpoints and their deliveries. */
  webhooks: WebhookStore;
  /**
   * The delivery worker's outbox and webhook store: on Redis, the same data over a connection of its own (so a busy
   * endpoint never queues behind a request's RESERVE or SETTLE); in memory, the stores above.
   */
  delivery: DeliveryStores;
  /** The ledger shipper's view of the Redis ledger (ledger-archive/); none in memory. */
  ships?: ShipSource;
  /** The owners shipper's view of the Redis response owners (ledger-archive/); none in memory. */
  ownerShips?: OwnerShipSource;
}

export interface DeliveryStores {
  outbox: EventOutbox;
  webhooks: WebhookBackend;
  /** Closes what was opened for them (nothing in memory). */
  close(): Promise<void>;
}

/** The delivery worker's stores on a duplicate of `client` (same server, prefix and options). */
export function redisDeliveryStores(client: Redis | Cluster, options: { prefix: string; limitWindowMs?: number }): DeliveryStores {
  const own = client.duplicate();
  const outbox = new RedisOutbox(redisShared(own, options));
  return { outbox, webhooks: new RedisWebhookStore(own, { prefix: options.prefix }), close: () => closeRedis(own) };
}

/**
 * The delivery worker's stores on a connection of their own to REDIS_URL, opened where they run (the delivery
 * thread, delivery-thread.ts): the same prefix, window and options as the requests' store.
 */
export function openDeliveryStores(config: DeliveryStoreConfig, logger: Logger): DeliveryStores {
  const client = connect(config, config.redisUrl, logger);
  const prefix = config.redisPrefix;
  const outbox = new RedisOutbox(redisShared(client, { prefix, limitWindowMs: config.rateLimitWindowSeconds * 1000 }));
  return { outbox, webhooks: new RedisWebhookStore(client, { prefix }), close: () => closeRedis(client) };
}

/** What a connection of the delivery's own needs of the configuration: plain data, to hand to a thread. */
export type DeliveryStoreConfig = Pick<StoreConfig, 'redisPrefix' | 'redisCluster' | 'storeTimeoutMs' | 'rateLimitWindowSeconds'> & {
  redisUrl: string;
};

/** What the host gave instead of what the configuration would open: its own Redis client, sessions, commerce. */
export interface GivenStores {
  redis?: Redis | Cluster;
  sessions?: SessionStore;
  commerce?: CommerceStore;
}

/**
 * The one place the stores are built, whether on the host's Redis client, on REDIS_URL or in memory, so every option
 * (the rate-limit window, the prefix) reaches every backend. `close` closes only what was opened here.
 */
export function createStores(config: StoreConfig, logger: Logger, given: GivenStores = {}): Stores & { close: () => Promise<void> } {
  const limitWindowMs = config.rateLimitWindowSeconds * 1000;
  const client = given.redis ?? (config.redisUrl ? connect(config, config.redisUrl, logger) : undefined);
  if (client === undefined) {
    const store = new MemoryStore({ limitWindowMs });
    const webhooks = new MemoryWebhookStore();
    return {
      store,
      sessions: given.sessions ?? new MemorySessionStore(),
      commerce: given.commerce ?? new MemoryCommerceStore(),
      responses: new MemoryResponseOwners(),
      webhooks,
      delivery: { outbox: store, webhooks, close: async () => undefined },
      close: () => store.close(),
    };
  }
  const prefix = config.redisPrefix;
  const store = new RedisStore(client, { prefix, limitWindowMs });
  const delivery = redisDeliveryStores(client, { prefix, limitWindowMs });
  return {
    store,
    sessions: given.sessions ?? new RedisSessionStore(client, { prefix }),
    commerce: given.commerce ?? new RedisCommerceStore(client, { prefix }),
    // With the archive, day buckets: shipped to PostgreSQL and gone from Redis after the hot window.
    responses: new RedisResponseOwners(client, {
      prefix,
      archived: config.ledgerDatabaseUrl !== undefined ? { hotMs: config.ledgerHotHours * 3_600_000 } : undefined,
    }),
    webhooks: new RedisWebhookStore(client, { prefix }),
    ships: new RedisShipSource(client, prefix),
    ownerShips: new RedisOwnerShipSource(client, prefix),
    delivery,
    // The host's own client stays open; the delivery's duplicate of it is ours.
    close: async () => {
      await delivery.close();
      if (!given.redis) await store.close();
    },
  };
}

function connect(config: Pick<StoreConfig, 'redisCluster' | 'storeTimeoutMs'>, url: string, logger: Logger): Redis | Cluster {
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
