/** What the store keeps of an account (who it is, its limits, its money) and of the packages granted to it. */
import type { Budget, BudgetStatus } from '../../limits/budget';
import type { LevelUse, Limits } from '../../limits/limits';
import type { TokenPackage, UnixSeconds, UsageTotals } from './common';

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
  /** The budget all the account's keys share per day, week or month, and its use in the period in force; null: none. */
  budget: BudgetStatus | null;
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
  /** The budget; null or absent: none. */
  budget?: Budget | null;
  /**
   * A trial package credited in the same step that makes the account (SIGNUP_TOKENS), under the grant id `signup`:
   * an account that exists has it, one that was never made (its email taken) has nothing.
   */
  trial?: NewTrial | null;
}

export interface NewTrial {
  /** A whole number from 1 to MAX_GRANT_TOKENS. */
  tokens: number;
  /** Days from the account's creation until it expires; null: never. */
  validDays: number | null;
}

/** The idempotency id a trial package is granted under: one per account. */
export const TRIAL_GRANT = 'signup';

export interface AccountPatch {
  name?: string;
  status?: AccountStatus;
  role?: AccountRole;
  passwordHash?: string | null;
  /** New limits (replacing the old ones), from the account's next request; null: none. */
  limits?: Limits | null;
  /** A new budget (what the period used so far still counts), from the account's next request; null: none. */
  budget?: Budget | null;
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

/** The most one grant may credit: a quadrillion tokens, so a typo cannot credit the whole range at once. */
export const MAX_GRANT_TOKENS = 1_000_000_000_000_000;
/**
 * The most unspent tokens an account's live packages may hold together: 2^53 − 1, so every balance, charge and
 * remainder stays an exact integer in JavaScript and in Redis's Lua (whose numbers are doubles too).
 */
export const MAX_UNSPENT_TOKENS = Number.MAX_SAFE_INTEGER;

/** Whether a grant of `tokens` is one the store takes: a whole number from 1 to MAX_GRANT_TOKENS. */
export function isGrantable(tokens: number): boolean {
  return Number.isSafeInteger(tokens) && tokens >= 1 && tokens <= MAX_GRANT_TOKENS;
}

export interface NewPackage {
  /** A whole number from 1 to MAX_GRANT_TOKENS. */
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
  | { kind: 'account_not_found' }
  /** `tokens` is not a whole number from 1 to MAX_GRANT_TOKENS: nothing credited. */
  | { kind: 'invalid_tokens' }
  /** The account's live packages would hold more than MAX_UNSPENT_TOKENS unspent: nothing credited. */
  | { kind: 'balance_limit' };
