/**
 * The upgrade from the layout before accounts: every key written then becomes the only key of an account of its own
 * (whose id is the key's id, so its packages, reservations, settle markers and ledger stay in the slot they are in).
 * Runs at start, idempotently: each key's move is one script that leaves a migrated key alone, and the indexes
 * outside the slot are set (again) whatever it answers, so processes starting together, or a start interrupted
 * half-way, end in the same state.
 */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';

/** The layout version a migrated store records under `schema`. */
export const SCHEMA_VERSION = '2';

export interface MigrationDeps {
  redis: Redis | Cluster;
  prefix: string;
  /** Runs MIGRATE_KEY for one old key: 1 migrated, 0 already, -1 no such key. */
  migrateKey(keyId: string): Promise<number>;
}

/** Resolves to the number of keys this call migrated (0 once the store is on the current layout). */
export async function migrateLegacyKeys({ redis, prefix, migrateKey }: MigrationDeps): Promise<number> {
  if ((await redis.get(`${prefix}schema`)) === SCHEMA_VERSION) return 0;
  // The old layout listed every key id in one set; the new one never writes it.
  const ids = await redis.smembers(`${prefix}keys`);
  let migrated = 0;
  for (const id of ids) {
    const result = await migrateKey(id);
    if (result === -1) continue;
    if (result === 1) migrated++;
    await redis.hset(`${prefix}ka`, id, id);
    await redis.zadd(`${prefix}accounts`, 0, id);
  }
  await redis.set(`${prefix}schema`, SCHEMA_VERSION);
  return migrated;
}
