/** Builds the stores under test: a MemoryStore, or a RedisStore on the test redis-server with a prefix of its own. */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { MemoryStore } from '../../src/store/memory/memory-store';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import type { AccountStore } from '../../src/store/ports/account-store';
import type { KeyStore } from '../../src/store/ports/key-store';
import type { Store } from '../../src/store/ports/store';
import { generateKey } from '../../src/http/keys';
import type { Budget } from '../../src/limits/budget';
import type { Limits } from '../../src/limits/limits';

export function testRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error('TEST_REDIS_URL is not set: run the tests through jest (global setup starts redis)');
  return url;
}

export interface StoreUnderTest {
  store: Store;
  /** A plain client on the same Redis (RedisStore only), for inspecting what the store wrote. */
  redis?: Redis;
  prefix?: string;
  close(): Promise<void>;
}

export const storeKinds = ['memory', 'redis'] as const;
export type StoreKind = (typeof storeKinds)[number];

/**
 * `it` for what only a Redis store can show (what it writes under which keys, how long they live): generated for the
 * redis store alone, with "(Redis only)" in its name, so the memory store's run has no test that passes empty.
 */
export function itOnRedis(kind: StoreKind): (name: string, test: () => Promise<void>) => void {
  return (name, test) => {
    if (kind === 'redis') it(`${name} (Redis only)`, test);
  };
}

/** `now`: the store's clock (in memory everything's; in Redis the budgets' periods, leases keeping the server's TIME). */
export async function makeStore(kind: StoreKind, options: { limitWindowMs?: number; now?: () => number } = {}): Promise<StoreUnderTest> {
  if (kind === 'memory') {
    const store = new MemoryStore(options);
    return { store, close: () => store.close() };
  }
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  const client = new Redis(testRedisUrl(), { ...redisClientOptions(2000), enableOfflineQueue: true });
  const inspector = new Redis(testRedisUrl());
  const store = new RedisStore(client, { prefix, ...options });
  return {
    store,
    redis: inspector,
    prefix,
    close: async () => {
      const keys = await inspector.keys(`${prefix}*`);
      if (keys.length) await inspector.del(...keys);
      await store.close();
      inspector.disconnect();
    },
  };
}

/** Creates an account without an email, for API use only; returns its id. */
export async function newAccount(store: AccountStore, name = 'test'): Promise<string> {
  const created = await store.createAccount({ email: null, name, passwordHash: null, role: 'member', status: 'active' });
  if (created.kind !== 'created') throw new Error('an account without an email cannot clash');
  return created.account.id;
}

/** Creates a key in `accountId`, or in a new account of its own holding one package of `tokens`; returns the ids and secret. */
export async function keyWithTokens(
  store: AccountStore & KeyStore,
  tokens: number,
  extra: {
    models?: string[];
    expiresAt?: number | null;
    limitTokens?: number | null;
    accountId?: string;
    limits?: Limits | null;
    budget?: Budget | null;
  } = {},
): Promise<{ id: string; accountId: string; secret: string }> {
  const accountId = extra.accountId ?? (await newAccount(store));
  const k = generateKey();
  const made = await store.createKey(accountId, {
    hash: k.hash,
    prefix: k.prefix,
    name: 'test',
    expiresAt: extra.expiresAt ?? null,
    models: extra.models ?? null,
    limitTokens: extra.limitTokens ?? null,
    limits: extra.limits ?? null,
    budget: extra.budget ?? null,
  });
  if (made.kind !== 'created') throw new Error(`no key in account ${accountId}: ${made.kind}`);
  if (tokens > 0) await store.grantPackage(accountId, { tokens, expiresAt: null });
  return { id: made.key.id, accountId, secret: k.secret };
}
