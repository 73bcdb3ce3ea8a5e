/** tokenmeter's public face: the factory, its options and hooks, and the stores a host may pass in. */
export { createTokenmeter, type Tokenmeter } from './tokenmeter';
export {
  ConfigError,
  type Authenticate,
  type ByteSize,
  type Identity,
  type LogLevel,
  type SettledRecord,
  type TokenmeterOptions,
} from './config/options';
export { MemoryStore } from './store/memory-store';
export { RedisStore, redisClientOptions } from './store/redis-store';
export type {
  AccountRecord,
  AccountState,
  KeyRecord,
  KeyState,
  NewAccount,
  NewKey,
  NewPackage,
  Settlement,
  Store,
  TokenPackage,
  UsageRecord,
} from './store/types';
export { generateKey } from './http/keys';
export { ModelsFileError, type ModelEntry } from './catalog/models';
