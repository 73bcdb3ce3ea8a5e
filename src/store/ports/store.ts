/**
 * The whole store: every port, as MemoryStore and RedisStore implement them (one class per backend, since the ports
 * share its key layout). A host brings a whole Store of its own, or only the ServingStore ports.
 */
import type { AccountStore } from './account-store';
import type { EventOutbox } from './event-outbox';
import type { KeyLookup } from './key-lookup';
import type { KeyStore } from './key-store';
import type { MeteringStore, StoreKind } from './metering-store';
import type { ModelLimitStore } from './model-limit-store';
import type { UsageLedger } from './usage-ledger';

export interface Store extends MeteringStore, KeyStore, AccountStore, UsageLedger, ModelLimitStore, EventOutbox {
  readonly kind: StoreKind;
  close(): Promise<void>;
}

/**
 * What serving the OpenAI routes needs: metering and key lookup. A host whose accounts and balances live in its own
 * system implements these alone; the routes that manage accounts, keys and money then stay off (docs/library.md,
 * "Your own store").
 */
export type ServingStore = MeteringStore & KeyLookup;

/**
 * Every member a whole store has beyond the serving ports (the compiler keeps the list complete), less the optional
 * `daily` (a host's store from before rollups is still whole).
 */
const BEYOND_SERVING: Record<Exclude<keyof Store, keyof ServingStore | 'daily'>, true> = {
  createKey: true,
  listKeys: true,
  updateKey: true,
  revokeKey: true,
  createAccount: true,
  getAccount: true,
  getAccounts: true,
  findAccountByEmail: true,
  listAccounts: true,
  updateAccount: true,
  grantPackage: true,
  usage: true,
  admitModel: true,
  endModel: true,
  renewModel: true,
  modelUse: true,
  wantEvents: true,
  eventAccounts: true,
  readEvents: true,
  dropEvents: true,
  packageEvents: true,
  setLowBalance: true,
  close: true,
};

/** The serving ports' members (the compiler keeps the list complete). */
const SERVING: Record<Exclude<keyof ServingStore, 'kind'>, true> = {
  reserve: true,
  renew: true,
  release: true,
  settle: true,
  ping: true,
  findKeyId: true,
  getKey: true,
};

/**
 * The store's members bound to it, as a plain object: what a wrapper spreads and overrides (the archive's `usage`), so
 * the wrapper never depends on the store being a plain object or on its methods' `this`.
 */
export function boundStore(store: Store): Store {
  const members = [...Object.keys(SERVING), ...Object.keys(BEYOND_SERVING), 'daily'];
  const bound: Record<string, unknown> = { kind: store.kind };
  for (const name of members) {
    const member = (store as unknown as Record<string, unknown>)[name];
    if (typeof member === 'function') bound[name] = (member as (...a: unknown[]) => unknown).bind(store);
  }
  return bound as unknown as Store;
}

/** Whether a store implements every port, or only the serving ones (a store with some of the rest counts as serving). */
export function isWholeStore(store: ServingStore): store is Store {
  const members = Object.keys(BEYOND_SERVING) as (keyof typeof BEYOND_SERVING)[];
  return members.every((name) => typeof (store as Partial<Store>)[name] === 'function');
}
