/** Builds the session and commerce stores under test: in memory, or on the test redis-server with a prefix of their own. */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { MemoryCommerceStore } from '../../src/store/memory/memory-commerce-store';
import { MemorySessionStore } from '../../src/store/memory/memory-session-store';
import { RedisCommerceStore } from '../../src/store/redis/redis-commerce-store';
import { redisClientOptions } from '../../src/store/redis/redis-store';
import { RedisSessionStore } from '../../src/store/redis/redis-session-store';
import type { StoreKind } from './stores';
import { testRedisUrl } from './stores';

export interface Under<T> {
  store: T;
  /** A plain client on the same Redis (Redis stores only), for inspecting what the store wrote. */
  redis?: Redis;
  prefix?: string;
  close(): Promise<void>;
}

async function onRedis<T>(build: (client: Redis, prefix: string) => T): Promise<Under<T>> {
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  const client = new Redis(testRedisUrl(), { ...redisClientOptions(2000), enableOfflineQueue: true });
  const inspector = new Redis(testRedisUrl());
  return {
    store: build(client, prefix),
    redis: inspector,
    prefix,
    close: async () => {
      const keys = await inspector.keys(`${prefix}*`);
      if (keys.length) await inspector.del(...keys);
      client.disconnect();
      inspector.disconnect();
    },
  };
}

export async function makeSessionStore(kind: StoreKind): Promise<Under<MemorySessionStore | RedisSessionStore>> {
  if (kind === 'memory') return { store: new MemorySessionStore(), close: async () => {} };
  return onRedis((client, prefix) => new RedisSessionStore(client, { prefix }));
}

export async function makeCommerceStore(kind: StoreKind): Promise<Under<MemoryCommerceStore | RedisCommerceStore>> {
  if (kind === 'memory') return { store: new MemoryCommerceStore(), close: async () => {} };
  return onRedis((client, prefix) => new RedisCommerceStore(client, { prefix }));
}
