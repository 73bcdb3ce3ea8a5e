/** tokenmeter's public face: the factory, its options and hooks, and the stores a host may pass in. */
export { createTokenmeter, type Tokenmeter } from './tokenmeter';
export { ConfigError } from './config/options';
export type { Authenticate, ByteSize, Identity, LogLevel, SettledRecord, TokenmeterOptions } from './config/option-types';
export { MemoryStore } from './store/memory-store';
export { RedisStore, redisClientOptions } from './store/redis-store';
export type { AccountRecord, AccountState, NewAccount, NewPackage } from './store/account-types';
export type { KeyRecord, KeyState, NewKey } from './store/key-types';
export type { Settlement, UsageRecord } from './store/metering-types';
export type { Store, TokenPackage } from './store/types';
export { generateKey } from './http/keys';
export { ModelsFileError, type ModelEntry } from './catalog/models';
