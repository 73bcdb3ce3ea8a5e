/** tokenmeter's public face: the factory, its options and hooks, and the stores a host may pass in. */
export { createTokenmeter, type Tokenmeter } from './tokenmeter';
export { ConfigError } from './config/options';
export type {
  Authenticate,
  ByteSize,
  Identity,
  LogLevel,
  ServingStoreOptions,
  SettledRecord,
  TokenmeterOptions,
} from './config/option-types';
export { MemoryStore } from './store/memory/memory-store';
export { RedisStore, redisClientOptions } from './store/redis/redis-store';
export type { AccountRecord, AccountState, NewAccount, NewPackage } from './store/records/account';
export type { KeyRecord, KeyRef, KeyState, NewKey } from './store/records/key';
export type { ReserveRequest, ReserveResult, Settlement, SettleResult, UsageRecord } from './store/records/metering';
export type { Store, ServingStore } from './store/ports/store';
export type { MeteringStore, StoreKind } from './store/ports/metering-store';
export type { KeyAccess, KeyLookup } from './store/ports/key-lookup';
export type { KeyStore } from './store/ports/key-store';
export type { AccountStore } from './store/ports/account-store';
export type { UsageLedger } from './store/ports/usage-ledger';
export type { ModelLimitStore } from './store/ports/model-limit-store';
export type { TokenPackage } from './store/records/common';
export { generateKey } from './http/keys';
export { verifyWebhook, signWebhook, SIGNATURE_HEADER, type VerifyResult, type VerifyOptions } from './events/signature';
export type { EventType, OutboxEvent, EventWants } from './store/records/events';
export type { EventOutbox } from './store/ports/event-outbox';
export { ModelsFileError, type ModelEntry } from './catalog/models';
