/**
 * The shared store: Redis or Redis Cluster through ioredis; every check-and-change is one Lua script on one account's
 * slot (or a model's). One store composed of its parts, which share its connection and key layout (redis-shared.ts),
 * one port each: metering (redis-metering.ts), keys (redis-keys.ts), accounts (redis-accounts.ts), model limits
 * (redis-model-limits.ts) and the event outbox (redis-outbox.ts, a service of its own that the steps write events
 * through); and here the usage ledger's reads and closing.
 */
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Store } from '../ports/store';
import type { UsageQuery, UsageRecord } from '../records/metering';
import type { DailyQuery, DailyUsage } from '../records/rollups';
import { RedisAccounts } from './redis-accounts';
import { RedisKeys } from './redis-keys';
import { readLedgers } from './redis-ledger';
import { RedisMetering } from './redis-metering';
import { RedisModelLimits } from './redis-model-limits';
import { RedisOutbox } from './redis-outbox';
import { readRollups } from './redis-rollups';
import { RollupFollower } from './redis-rollup-follower';
import { closeRedis, redisShared, type RedisShared, type RedisStoreOptions } from './redis-shared';

export type { RedisStoreOptions } from './redis-shared';

/** ioredis options for a store that fails closed: no offline queue, bounded command time, endless reconnects. */
export function redisClientOptions(commandTimeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    // Commands issued in the same tick (many requests' RESERVE and SETTLE under load) go out in one write.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    // ioredis waits this long for a closing socket; on a socket that is already dead its timer would only linger.
    disconnectTimeout: 200,
  };
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  private readonly shared: RedisShared;
  /** The event outbox: its own service, which the delivery worker may also open on a connection of its own. */
  readonly outbox: RedisOutbox;
  private readonly metering: RedisMetering;
  private readonly keys: RedisKeys;
  private readonly accounts: RedisAccounts;
  private readonly limits: RedisModelLimits;
  /** Derives the daily rollups from the ledger after settlement, every second until closed. */
  readonly rollups: RollupFollower;

  constructor(redis: Redis | Cluster, options: RedisStoreOptions = {}) {
    this.shared = redisShared(redis, options);
    this.outbox = new RedisOutbox(this.shared);
    this.rollups = new RollupFollower(this.shared, options.rollupIntervalMs);
    this.metering = new RedisMetering(this.shared, this.outbox, (accountId) => this.rollups.settled(accountId));
    this.keys = new RedisKeys(this.shared, this.outbox);
    this.accounts = new RedisAccounts(this.shared, this.outbox);
    this.limits = new RedisModelLimits(this.shared);
  }

  // The ports, each answered by its part.
  reserve: Store['reserve'] = (r) => this.metering.reserve(r);
  renew: Store['renew'] = (accountId, requestId, leaseMs) => this.metering.renew(accountId, requestId, leaseMs);
  release: Store['release'] = (accountId, requestId) => this.metering.release(accountId, requestId);
  settle: Store['settle'] = (s) => this.metering.settle(s);
  ping: Store['ping'] = () => this.metering.ping();
  findKeyId: Store['findKeyId'] = (hash) => this.keys.findKeyId(hash);
  getKey: Store['getKey'] = (keyId) => this.keys.getKey(keyId);
  createKey: Store['createKey'] = (accountId, input) => this.keys.createKey(accountId, input);
  listKeys: Store['listKeys'] = (accountId) => this.keys.listKeys(accountId);
  updateKey: Store['updateKey'] = (keyId, patch) => this.keys.updateKey(keyId, patch);
  revokeKey: Store['revokeKey'] = (keyId) => this.keys.revokeKey(keyId);
  createAccount: Store['createAccount'] = (input) => this.accounts.createAccount(input);
  getAccount: Store['getAccount'] = (accountId) => this.accounts.getAccount(accountId);
  getAccounts: Store['getAccounts'] = (accountIds) => this.accounts.getAccounts(accountIds);
  findAccountByEmail: Store['findAccountByEmail'] = (email) => this.accounts.findAccountByEmail(email);
  listAccounts: Store['listAccounts'] = (q) => this.accounts.listAccounts(q);
  updateAccount: Store['updateAccount'] = (accountId, patch) => this.accounts.updateAccount(accountId, patch);
  grantPackage: Store['grantPackage'] = (accountId, input, options) => this.accounts.grantPackage(accountId, input, options);
  admitModel: Store['admitModel'] = (model, check) => this.limits.admitModel(model, check);
  endModel: Store['endModel'] = (model, requestId, how) => this.limits.endModel(model, requestId, how);
  renewModel: Store['renewModel'] = (model, requestId, leaseMs) => this.limits.renewModel(model, requestId, leaseMs);
  modelUse: Store['modelUse'] = (model, limits) => this.limits.modelUse(model, limits);
  wantEvents: Store['wantEvents'] = (wants) => this.outbox.wantEvents(wants);
  eventAccounts: Store['eventAccounts'] = (sweep) => this.outbox.eventAccounts(sweep);
  readEvents: Store['readEvents'] = (accountId, limit) => this.outbox.readEvents(accountId, limit);
  dropEvents: Store['dropEvents'] = (accountId, cursors) => this.outbox.dropEvents(accountId, cursors);
  packageEvents: Store['packageEvents'] = (accountId, warnSeconds) => this.outbox.packageEvents(accountId, warnSeconds);
  setLowBalance: Store['setLowBalance'] = (accountId, tokens) => this.outbox.setLowBalance(accountId, tokens);

  /** Moves keys written before accounts into accounts of their own (redis-accounts.ts); a no-op once done. */
  migrate(): Promise<number> {
    return this.accounts.migrate();
  }

  async usage(q: UsageQuery): Promise<UsageRecord[]> {
    let ids: string[];
    if (q.accountId !== undefined) ids = [q.accountId];
    else if (q.keyId !== undefined) ids = [await this.keys.accountOfKey(q.keyId)].filter((id): id is string => id !== undefined);
    else ids = await this.shared.redis.zrange(this.shared.keys.global('accounts'), 0, -1);
    return readLedgers(this.shared.redis, ids, (id) => this.shared.keys.slot(id, 'u'), q);
  }

  async daily(q: DailyQuery): Promise<DailyUsage> {
    const ids = q.accountId !== undefined ? [q.accountId] : await this.shared.redis.zrange(this.shared.keys.global('accounts'), 0, -1);
    return readRollups(this.shared.redis, ids, (id, part) => this.shared.keys.slot(id, part), q);
  }

  async close(): Promise<void> {
    await this.rollups.stop();
    await closeRedis(this.shared.redis);
  }
}
