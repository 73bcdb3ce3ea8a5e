/**
 * The store contract: accounts (which own the money: packages, balance, debt, reservations, ledger), their API keys
 * (which spend it, each within an optional cap), reservations with leases, settlement, the usage ledger, and the
 * model level of rate and concurrency limits.
 */
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, LimitRefusal, Limits } from '../limits/limits';

/** Unix seconds. */
export type UnixSeconds = number;

export type AccountRole = 'member' | 'admin';
export type AccountStatus = 'active' | 'disabled';

export interface AccountRecord {
  id: string;
  /** Normalised to lower case; unique among accounts; null for accounts made only for API use. */
  email: string | null;
  name: string;
  /** An opaque password hash (src/accounts/password.ts); the store never sees a password. Null: no password login. */
  passwordHash: string | null;
  role: AccountRole;
  /** A disabled account's keys are refused at once, on every process (checked in the reserve step, never cached). */
  status: AccountStatus;
  created: UnixSeconds;
  /** Rate and concurrency limits shared by all the account's keys; null: none. */
  limits: Limits | null;
}

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

export interface AccountState extends AccountRecord {
  /** The current use of the account's limits; null when it has none. */
  limitUse: LevelUse | null;
  /** Usable tokens: unexpired package remainders, less debt and open reservations. */
  balance: number;
  reserved: number;
  /** Tokens charged beyond the packages (the one-shortfall rule); paid by the next grant. */
  debt: number;
  packages: TokenPackage[];
  usage: UsageTotals;
}

export interface NewAccount {
  /** Normalised (trimmed, lower case) by the caller; the store compares it as given. */
  email: string | null;
  name: string;
  passwordHash: string | null;
  role: AccountRole;
  status: AccountStatus;
  /** Rate and concurrency limits; null or absent: none. */
  limits?: Limits | null;
}

export interface AccountPatch {
  name?: string;
  status?: AccountStatus;
  role?: AccountRole;
  passwordHash?: string | null;
  /** New limits (replacing the old ones), from the account's next request; null: none. */
  limits?: Limits | null;
}

export type CreateAccountResult = { kind: 'created'; account: AccountRecord } | { kind: 'email_taken' };

export interface AccountQuery {
  /** Case-insensitive substring of the email or the name. */
  search?: string;
  /** Most accounts returned. */
  limit: number;
  /**
   * Only accounts after this account id (ids sort by creation): pass the last id of a page to read the next. Accounts
   * migrated from keys of before accounts kept their key's id (`key_…`), so they list after the `acc_…` ones.
   */
  after?: string;
}

export interface KeyRecord {
  id: string;
  /** The account whose balance the key spends. Never changes. */
  accountId: string;
  name: string;
  /** First characters of the secret, for display. */
  prefix: string;
  created: UnixSeconds;
  expiresAt: UnixSeconds | null;
  revokedAt: UnixSeconds | null;
  /** The only models this key may use; null: all. */
  models: string[] | null;
  /** The most this key may ever be charged, in tokens (its cap); null: only the account's balance limits it. */
  limitTokens: number | null;
  /** Tokens charged to this key so far (what counts against its cap). */
  spentTokens: number;
  /** When a request on this key was last settled; null: never. */
  lastUsed: UnixSeconds | null;
  /** Rate and concurrency limits of this key alone; null: none. */
  limits: Limits | null;
}

/** `active`, or why the key is refused. Derived from the record and the clock. */
export type KeyStatus = 'active' | 'revoked' | 'expired';

export interface KeyState extends KeyRecord {
  /** The current use of the key's limits; null when it has none. */
  limitUse: LevelUse | null;
  /** What the account offers this key: min(account balance, cap − spent − reserved on this key). */
  balance: number;
  /** Tokens reserved by this key's requests in flight. */
  reserved: number;
  /** The account's debt. */
  debt: number;
  /** The account's packages. */
  packages: TokenPackage[];
  /** This key's own usage. */
  usage: UsageTotals;
}

export interface NewKey {
  hash: string;
  prefix: string;
  name: string;
  expiresAt: UnixSeconds | null;
  models: string[] | null;
  /** The key's cap; null: none. */
  limitTokens?: number | null;
  /** The key's rate and concurrency limits; null or absent: none. */
  limits?: Limits | null;
}

/** What can change on a key after its creation. */
export interface KeyPatch {
  /** New limits (replacing the old ones); null: none. */
  limits?: Limits | null;
}

/** What authentication needs to reserve: both ids. The mapping never changes, so callers may cache it. */
export interface KeyRef {
  keyId: string;
  accountId: string;
}

export interface NewPackage {
  tokens: number;
  expiresAt: UnixSeconds | null;
}

export interface GrantOptions {
  /**
   * An idempotency id (e.g. `code:<id>`, `stripe:<session id>`): the package is credited at most once per id and
   * account, however often the grant is retried. The marker is checked and set in the same step as the credit.
   */
  once?: string;
}

export type GrantResult =
  | { kind: 'granted'; package: TokenPackage }
  /** `once` was already used on this account: nothing credited; the package it credited then. */
  | { kind: 'duplicate'; package: TokenPackage | undefined }
  | { kind: 'account_not_found' };

export interface ReserveRequest {
  accountId: string;
  /** The key the request came with; null when the host app charges its account directly (no key, no cap). */
  keyId: string | null;
  requestId: string;
  model: string;
  /** Tokens charged for the prompt, already weighted. */
  fixed: number;
  /** Tokens charged per completion token the request may produce (output weight × choices). */
  unit: number;
  /** Completion tokens wanted per choice (max_tokens or the model's default). */
  allowance: number;
  /**
   * The allowance is the model's default, not the client's max_tokens: a key's or account's tpm may lower it (to what
   * the limit could ever admit), as the balance does, rather than refuse the request as too large.
   */
  defaultAllowance?: boolean;
  leaseMs: number;
}

export type InvalidKeyReason = 'not_found' | 'revoked' | 'expired';

export type ReserveResult =
  | {
      kind: 'reserved';
      /** completion tokens per choice the balance covers (≤ allowance) */
      allowance: number;
      amount: number;
      /** The use of the key's and the account's limits, for those that have any (absent when neither has). */
      limitUse?: LevelUse[];
    }
  /** A key or account limit refused the request; nothing was reserved or counted. */
  | { kind: 'rate_limited'; refusal: LimitRefusal }
  /** `limitedBy`: whether the account's balance or the key's cap is what falls short. */
  | { kind: 'insufficient_quota'; available: number; limitedBy: 'account' | 'key' }
  | { kind: 'invalid_key'; reason: InvalidKeyReason }
  | { kind: 'account_disabled' }
  | { kind: 'account_not_found' }
  | { kind: 'model_not_allowed' };

export interface Settlement {
  accountId: string;
  /** Null for a request charged to its account without a key. */
  keyId: string | null;
  requestId: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  chargedTokens: number;
  /** True when the counts come from our tokenizer rather than the upstream's usage. */
  estimated: boolean;
  stream: boolean;
  /** The HTTP status the client got. */
  status: number;
}

/** A ledger record: the settlement as stored, with when and where in the account's ledger. */
export interface UsageRecord extends Settlement {
  created: UnixSeconds;
  /** Position in the account's ledger: pass it back as `after` (with the account or key) to read on incrementally. */
  cursor: string;
}

export interface UsageQuery {
  accountId?: string;
  /** Only this key's records (its account's ledger, filtered). */
  keyId?: string;
  model?: string;
  since?: UnixSeconds;
  until?: UnixSeconds;
  /** Only records after this cursor (a position in one account's ledger), oldest first: the first `limit` of them. */
  after?: string;
  /** Most records returned: without `after`, the newest `limit`, still oldest first. */
  limit: number;
}

export type SettleResult = 'settled' | 'duplicate';

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

/** A key's status now: revoked first, then expired. */
export function keyStatus(key: Pick<KeyRecord, 'revokedAt' | 'expiresAt'>, now: UnixSeconds): KeyStatus {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  return 'active';
}

/**
 * Settled-request markers are kept this long, so a settle retried within it (after a lost reply, or replayed from
 * the journal after a restart) is recognised as a duplicate. One small key per request: a day bounds the memory.
 */
export const SETTLE_DEDUP_SECONDS = 24 * 3600;
