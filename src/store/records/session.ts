/** What the session store keeps: console sign-in sessions, and the answer of a failed-login window. */
import type { UnixSeconds } from './common';

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
  /** The session ends this long after it started, however much it is used; absent: only the idle time ends it. */
  maxMs?: number;
  stamp: string;
}

export type AttemptResult = { allowed: true } | { allowed: false; /** until the window ends */ retryAfterMs: number };
