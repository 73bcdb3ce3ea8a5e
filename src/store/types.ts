/**
 * The store contract: keys, token packages, reservations with leases, settlement, the usage ledger, and the model
 * level of rate and concurrency limits.
 */
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, Limits } from '../limits/limits';

/** Unix seconds. */
export type UnixSeconds = number;

export interface KeyRecord {
  id: string;
  name: string;
  /** First characters of the secret, for display. */
  prefix: string;
  created: UnixSeconds;
  expiresAt: UnixSeconds | null;
  revokedAt: UnixSeconds | null;
  /** The only models this key may use; null: all. */
  models: string[] | null;
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

export interface KeyState extends KeyRecord {
  /** Usable tokens: unexpired package remainders, less debt and open reservations. */
  balance: number;
  reserved: number;
  /** Tokens charged beyond the packages (the one-shortfall rule); paid by the next grant. */
  debt: number;
  packages: TokenPackage[];
  usage: UsageTotals;
}

export interface NewKey {
  hash: string;
  prefix: string;
  name: string;
  expiresAt: UnixSeconds | null;
  models: string[] | null;
}

export interface NewPackage {
  tokens: number;
  expiresAt: UnixSeconds | null;
}

export interface ReserveRequest {
  keyId: string;
  requestId: string;
  model: string;
  /** Tokens charged for the prompt, already weighted. */
  fixed: number;
  /** Tokens charged per completion token the request may produce (output weight × choices). */
  unit: number;
  /** Completion tokens wanted per choice (max_tokens or the model's default). */
  allowance: number;
  leaseMs: number;
}

export type InvalidKeyReason = 'not_found' | 'revoked' | 'expired';

export type ReserveResult =
  | { kind: 'reserved'; /** completion tokens per choice the balance covers (≤ allowance) */ allowance: number; amount: number }
  | { kind: 'insufficient_quota'; available: number }
  | { kind: 'invalid_key'; reason: InvalidKeyReason }
  | { kind: 'model_not_allowed' };

export interface Settlement {
  keyId: string;
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

/** A ledger record: the settlement as stored, with when and where in the key's ledger. */
export interface UsageRecord extends Settlement {
  created: UnixSeconds;
  /** Position in the key's ledger: pass it back as `after` to read on incrementally. */
  cursor: string;
}

export interface UsageQuery {
  keyId?: string;
  model?: string;
  since?: UnixSeconds;
  until?: UnixSeconds;
  /** Only records after this cursor (a key's ledger position), oldest first: the first `limit` of them. */
  after?: string;
  /** Most records returned: without `after`, the newest `limit`, still oldest first. */
  limit: number;
}

export type SettleResult = 'settled' | 'duplicate';

/**
 * Every check-and-change is atomic: in Redis one Lua script, in memory one synchronous step.
 * Expected outcomes (unknown key, short balance) are returned values; a thrown error means the store is unreachable.
 */
export interface Store {
  readonly kind: 'memory' | 'redis';
  createKey(input: NewKey): Promise<KeyRecord>;
  /** Undefined when the key does not exist. */
  grantPackage(keyId: string, input: NewPackage): Promise<TokenPackage | undefined>;
  /** The key id stored for a secret's hash. The mapping never changes, so callers may cache it. */
  findKeyId(hash: string): Promise<string | undefined>;
  getKey(keyId: string): Promise<KeyState | undefined>;
  listKeys(): Promise<KeyRecord[]>;
  /** False when the key does not exist. */
  revokeKey(keyId: string): Promise<boolean>;
  /** Reserves for a request; a request id that already holds a reservation has it replaced (dropped if refused). */
  reserve(request: ReserveRequest): Promise<ReserveResult>;
  /** Extends a reservation's lease; false when it is gone (settled, released or expired). */
  renew(keyId: string, requestId: string, leaseMs: number): Promise<boolean>;
  release(keyId: string, requestId: string): Promise<void>;
  /** Charges, drops the reservation and appends to the ledger in one step; exactly once per request id. */
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

/**
 * Settled-request markers are kept this long, so a settle retried within it (after a lost reply, or replayed from
 * the journal after a restart) is recognised as a duplicate. One small key per request: a day bounds the memory.
 */
export const SETTLE_DEDUP_SECONDS = 24 * 3600;
