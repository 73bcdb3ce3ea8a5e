/**
 * The session port, for the console's sign-in and its login throttle (src/accounts/): sessions kept by a hash of their
 * id, with an idle expiry and an absolute one, and the failed-login counters that throttle password guessing, shared
 * by every process.
 */
import type { AttemptResult, NewSession, SessionRecord } from '../records/session';

/**
 * Every operation is atomic: in Redis one Lua script on one slot (an account's sessions share its hash tag), in
 * memory one synchronous step. A thrown error means the store is unreachable.
 */
export interface SessionStore {
  createSession(input: NewSession): Promise<void>;
  /**
   * The session, its idle expiry pushed forward (never past `maxMs` after it started); undefined when unknown, idle
   * for longer than `idleMs`, or started `maxMs` ago or more (absent: no such limit).
   */
  touchSession(accountId: string, hash: string, idleMs: number, maxMs?: number): Promise<SessionRecord | undefined>;
  /**
   * The live session as it is, its idle expiry left alone (a page that only shows who is signed in); undefined too
   * when it started `maxMs` ago or more.
   */
  readSession(accountId: string, hash: string, maxMs?: number): Promise<SessionRecord | undefined>;
  /** False when there was no such session. */
  deleteSession(accountId: string, hash: string): Promise<boolean>;
  /** Ends every session of the account (logout everywhere, disabling, a new password); resolves to how many. */
  deleteAccountSessions(accountId: string): Promise<number>;
  /**
   * Ends every session of the account but `hash`, which (if it still exists) now carries `stamp`, in one step: a
   * password changed in one session ends all the others and keeps that one. Resolves to how many were ended.
   */
  keepOnlySession(accountId: string, hash: string, stamp: string): Promise<number>;

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
