/** tokenmeter's public face: the factory, its options and hooks, and the stores a host may pass in. */
export { createTokenmeter, type Tokenmeter } from './tokenmeter';
export { ConfigError } from './config/options';
export type { Authenticate, ByteSize, Identity, LogLevel, SettledRecord, TokenmeterOptions } from './config/option-types';
export { MemoryStore } from './store/memory/memory-store';
export { RedisStore, redisClientOptions } from './store/redis/redis-store';
export type { AccountRecord, AccountState, NewAccount, NewPackage } from './store/records/account';
export type { KeyRecord, KeyState, NewKey } from './store/records/key';
export type { Settlement, UsageRecord } from './store/records/metering';
export type { Store } from './store/ports/store';
export type { TokenPackage } from './store/records/common';
export { generateKey } from './http/keys';
export { ModelsFileError, type ModelEntry } from './catalog/models';
