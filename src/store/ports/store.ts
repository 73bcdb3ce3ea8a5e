/**
 * The store contract: accounts (which own the money: packages, balance, debt, reservations, ledger), their API keys
 * (which spend it, each within an optional cap), reservations with leases, settlement, the usage ledger, and the
 * model level of rate and concurrency limits. The records it speaks of live in account-types.ts, key-types.ts and
 * metering-types.ts; this file keeps the Store interface and the basics they share.
 */
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, Limits } from '../../limits/limits';
import type {
  AccountPatch,
  AccountQuery,
  AccountRecord,
  AccountState,
  CreateAccountResult,
  GrantOptions,
  GrantResult,
  NewAccount,
  NewPackage,
} from '../records/account';
import type { KeyPatch, KeyRecord, KeyRef, KeyState, NewKey } from '../records/key';
import type { ReserveRequest, ReserveResult, Settlement, SettleResult, UsageQuery, UsageRecord } from '../records/metering';

/** Unix seconds. */
export type UnixSeconds = number;

export interface TokenPackage {
  id: string;
  tokens: number;
  remaining: number;
  expiresAt: UnixSeconds | null;
  created: UnixSeconds;
}

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  chargedTokens: number;
}

/**
 * Every check-and-change is atomic: in Redis one Lua script on the account's slot, in memory one synchronous step.
 * Expected outcomes (unknown key, short balance, taken email) are returned values; a thrown error means the store is
 * unreachable.
 */
export interface Store {
  readonly kind: 'memory' | 'redis';

  createAccount(input: NewAccount): Promise<CreateAccountResult>;
  /** Undefined when the account does not exist. */
  getAccount(accountId: string): Promise<AccountState | undefined>;
  /** Several accounts' states at once, in the order asked (undefined for an unknown id): a page of a list in one go. */
  getAccounts(accountIds: readonly string[]): Promise<(AccountState | undefined)[]>;
  /** The account with this (normalised) email. */
  findAccountByEmail(email: string): Promise<AccountRecord | undefined>;
  /** Accounts in creation order. */
  listAccounts(query: AccountQuery): Promise<AccountRecord[]>;
  /** Undefined when the account does not exist. Disabling takes effect at every process's next reserve. */
  updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | undefined>;

  /** Undefined when the account does not exist. */
  createKey(accountId: string, input: NewKey): Promise<KeyRecord | undefined>;
  /** Credits a package to the account; any debt is paid from it first. */
  grantPackage(accountId: string, input: NewPackage, options?: GrantOptions): Promise<GrantResult>;
  /** The key (and its account) stored for a secret's hash. The mapping never changes, so callers may cache it. */
  findKeyId(hash: string): Promise<KeyRef | undefined>;
  getKey(keyId: string): Promise<KeyState | undefined>;
  /** One account's keys, or every key; in creation order. */
  listKeys(accountId?: string): Promise<KeyRecord[]>;
  /** Undefined when the key does not exist. New limits apply from the key's next request. */
  updateKey(keyId: string, patch: KeyPatch): Promise<KeyRecord | undefined>;
  /** False when the key does not exist. */
  revokeKey(keyId: string): Promise<boolean>;

  /** Reserves for a request; a request id that already holds a reservation has it replaced (dropped if refused). */
  reserve(request: ReserveRequest): Promise<ReserveResult>;
  /** Extends a reservation's lease; false when it is gone (settled, released or expired). */
  renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean>;
  release(accountId: string, requestId: string): Promise<void>;
  /** Charges the account and the key, drops the reservation and appends to the ledger in one step; exactly once per request id. */
  settle(settlement: Settlement): Promise<SettleResult>;
  usage(query: UsageQuery): Promise<UsageRecord[]>;

  /**
   * Model-level limits, in the model's own slot: admits a request into the model's windows, or refuses it with
   * nothing changed. Called only for models with limits, before the reservation (and undone if that is refused).
   */
  admitModel(model: string, check: LimitCheck): Promise<AdmitResult>;
  /** The request lets go of the model's limits: slot freed, tpm corrected (LimitEnd). */
  endModel(model: string, requestId: string, how: LimitEnd): Promise<void>;
  /** Extends the request's concurrency lease on the model (with its reservation's). */
  renewModel(model: string, requestId: string, leaseMs: number): Promise<void>;
  /** The model's current use of its limits. */
  modelUse(model: string, limits: Limits): Promise<LevelUse>;
  /** Resolves when the store answers; rejects when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
