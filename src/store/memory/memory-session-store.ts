/** The embedded session store: sessions and throttle windows in this process's memory (one process only). */
import type { AttemptResult, NewSession, SessionRecord } from '../records/session';
import type { SessionStore } from '../ports/session-store';

interface Session {
  createdMs: number;
  lastSeenMs: number;
  idleMs: number;
  maxMs: number | undefined;
  stamp: string;
}

export class MemorySessionStore implements SessionStore {
  /** account id → session hash → session. */
  private readonly sessions = new Map<string, Map<string, Session>>();
  private readonly windows = new Map<string, { count: number; endsMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async createSession(input: NewSession): Promise<void> {
    const nowMs = this.now();
    this.purgeAccount(input.accountId, nowMs);
    let mine = this.sessions.get(input.accountId);
    if (!mine) this.sessions.set(input.accountId, (mine = new Map()));
    mine.set(input.hash, { createdMs: nowMs, lastSeenMs: nowMs, idleMs: input.idleMs, maxMs: input.maxMs, stamp: input.stamp });
  }

  async touchSession(accountId: string, hash: string, idleMs: number, maxMs?: number): Promise<SessionRecord | undefined> {
    const nowMs = this.now();
    const s = this.sessions.get(accountId)?.get(hash);
    // The limits in force now apply, to sessions started under others too.
    if (s) s.maxMs = maxMs;
    this.purgeAccount(accountId, nowMs);
    if (!s || !this.sessions.get(accountId)?.has(hash)) return undefined;
    s.lastSeenMs = nowMs;
    s.idleMs = idleMs;
    return { accountId, created: Math.floor(s.createdMs / 1000), lastSeen: Math.floor(nowMs / 1000), stamp: s.stamp };
  }

  async readSession(accountId: string, hash: string, maxMs?: number): Promise<SessionRecord | undefined> {
    const nowMs = this.now();
    const s = this.sessions.get(accountId)?.get(hash);
    if (!s || s.lastSeenMs + s.idleMs <= nowMs || (maxMs !== undefined && s.createdMs + maxMs <= nowMs)) return undefined;
    return { accountId, created: Math.floor(s.createdMs / 1000), lastSeen: Math.floor(s.lastSeenMs / 1000), stamp: s.stamp };
  }

  async deleteSession(accountId: string, hash: string): Promise<boolean> {
    this.purgeAccount(accountId, this.now());
    return this.sessions.get(accountId)?.delete(hash) ?? false;
  }

  async deleteAccountSessions(accountId: string): Promise<number> {
    this.purgeAccount(accountId, this.now());
    const n = this.sessions.get(accountId)?.size ?? 0;
    this.sessions.delete(accountId);
    return n;
  }

  async keepOnlySession(accountId: string, hash: string, stamp: string): Promise<number> {
    this.purgeAccount(accountId, this.now());
    const mine = this.sessions.get(accountId);
    if (!mine) return 0;
    let ended = 0;
    for (const other of [...mine.keys()]) if (other !== hash && mine.delete(other)) ended++;
    const kept = mine.get(hash);
    if (kept) kept.stamp = stamp;
    else this.sessions.delete(accountId);
    return ended;
  }

  async takeAttempt(bucket: string, windowMs: number, max: number): Promise<AttemptResult> {
    const nowMs = this.now();
    let w = this.windows.get(bucket);
    if (!w || w.endsMs <= nowMs) {
      // Windows are dropped lazily, here and when their bucket is next used; sweep when there are many.
      if (this.windows.size > 10_000) for (const [b, old] of this.windows) if (old.endsMs <= nowMs) this.windows.delete(b);
      this.windows.set(bucket, (w = { count: 0, endsMs: nowMs + windowMs }));
    }
    if (w.count >= max) return { allowed: false, retryAfterMs: w.endsMs - nowMs };
    w.count++;
    return { allowed: true };
  }

  async refundAttempt(bucket: string): Promise<void> {
    const w = this.windows.get(bucket);
    if (w && w.endsMs > this.now() && w.count > 0) w.count--;
  }

  async clearAttempts(bucket: string): Promise<void> {
    this.windows.delete(bucket);
  }

  async close(): Promise<void> {}

  private purgeAccount(accountId: string, nowMs: number): void {
    const mine = this.sessions.get(accountId);
    if (!mine) return;
    for (const [hash, s] of mine) {
      if (s.lastSeenMs + s.idleMs <= nowMs || (s.maxMs !== undefined && s.createdMs + s.maxMs <= nowMs)) mine.delete(hash);
    }
    if (mine.size === 0) this.sessions.delete(accountId);
  }
}
