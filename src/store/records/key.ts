/** What the store keeps of an API key: its record, its state (balance, cap, usage), and its status now. */
import type { Budget, BudgetStatus } from '../../limits/budget';
import type { LevelUse, Limits } from '../../limits/limits';
import type { TokenPackage, UnixSeconds, UsageTotals } from './common';

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
  /** The key's budget per day, week or month, and its use in the period in force; null: none. */
  budget: BudgetStatus | null;
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
  /** The key's budget; null or absent: none. */
  budget?: Budget | null;
  /**
   * The most keys the account may have, this one included: checked and counted in the same step as the creation, so
   * keys created at once cannot pass it. Revoked and expired keys count (they are kept). Absent: no limit.
   */
  maxKeys?: number;
}

export type CreateKeyResult =
  | { kind: 'created'; key: KeyRecord }
  | { kind: 'account_not_found' }
  /** The account already has `maxKeys` keys: nothing created. */
  | { kind: 'key_limit'; maxKeys: number };

/** What can change on a key after its creation. */
export interface KeyPatch {
  /** New limits (replacing the old ones); null: none. */
  limits?: Limits | null;
  /** A new budget (what the period used so far still counts); null: none. */
  budget?: Budget | null;
}

/** What authentication needs to reserve: both ids. The mapping never changes, so callers may cache it. */
export interface KeyRef {
  keyId: string;
  accountId: string;
}

/** A key's status now: revoked first, then expired. */
export function keyStatus(key: Pick<KeyRecord, 'revokedAt' | 'expiresAt'>, now: UnixSeconds): KeyStatus {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  return 'active';
}
