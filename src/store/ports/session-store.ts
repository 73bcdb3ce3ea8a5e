/**
 * The session store contract: console sign-in sessions (kept by a hash of their id, with an idle expiry) and the
 * failed-login counters that throttle password guessing, shared by every process.
 */
import type { UnixSeconds } from './store';

export interface SessionRecord {
  accountId: string;
  created: UnixSeconds;
  /** When the session was last used; it ends `idleMs` after this. */
  lastSeen: UnixSeconds;
  /** What the session was started under (a digest of the password hash): a changed password ends the session. */
  stamp: string;
}

export interface NewSession {
  accountId: string;
  /** SHA-256 of the session id, hex: the id itself is never stored. */
  hash: string;
  /** The session ends after this long unused. */
  idleMs: number;
  stamp: string;
}

export type AttemptResult = { allowed: true } | { allowed: false; /** until the window ends */ retryAfterMs: number };

/**
 * Every operation is atomic: in Redis one Lua script on one slot (an account's sessions share its hash tag), in
 * memory one synchronous step. A thrown error means the store is unreachable.
 */
export interface SessionStore {
  createSession(input: NewSession): Promise<void>;
  /** The session, its idle expiry pushed forward; undefined when unknown or idle for longer than `idleMs`. */
  touchSession(accountId: string, hash: string, idleMs: number): Promise<SessionRecord | undefined>;
  /** False when there was no such session. */
  deleteSession(accountId: string, hash: string): Promise<boolean>;
  /** Ends every session of the account (logout everywhere, disabling, a new password); resolves to how many. */
  deleteAccountSessions(accountId: string): Promise<number>;

  /**
   * Counts an attempt in `bucket`'s fixed window of `windowMs`; refused (and not counted) once `max` attempts were
   * counted in the window. Counting before the password is checked bounds guesses even when they arrive at once.
   */
  takeAttempt(bucket: string, windowMs: number, max: number): Promise<AttemptResult>;
  /** Gives back an attempt that turned out not to be a failure (a correct password). */
  refundAttempt(bucket: string): Promise<void>;
  /** Forgets the bucket's window. */
  clearAttempts(bucket: string): Promise<void>;

  close(): Promise<void>;
}
