/**
 * One level's limits in memory (the Redis scripts do the same, helpers/limit-functions.lua): a sliding window log of the
 * requests admitted in the last window with the tokens each counts, and the requests in flight with their leases.
 */
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, LimitKind, LimitLevel, LimitRefusal, Limits } from './limits';

/** A retry hint for a concurrency refusal: a slot frees when some request ends, which nobody can foresee. */
export const CONCURRENCY_RETRY_MS = 1_000;

interface Admission {
  at: number;
  tokens: number;
}

export class LimitWindow {
  /** request id -> admission, in admission order (Map keeps insertion order, so the oldest is first). */
  private readonly log = new Map<string, Admission>();
  private tokenSum = 0;
  /** When the newest entry was admitted (the reset time), kept so the headers need no walk of the log. */
  private newestAt = 0;
  /** request id -> lease deadline (ms). */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  /** True when nothing is held: the owner may drop this window. */
  empty(now: number): boolean {
    this.purge(now);
    return this.log.size === 0 && this.inFlight.size === 0;
  }

  /** Whether the request fits every limit; undefined when it does, else the refusal (nothing changed either way). */
  check(level: LimitLevel, c: LimitCheck, now: number): LimitRefusal | undefined {
    this.purge(now);
    const { rpm, tpm, maxConcurrent } = c.limits;
    const held = this.log.get(c.requestId);
    const refuse = (kind: LimitKind, limit: number, used: number, retryAfterMs: number, tooLarge = false): LimitRefusal => ({
      level,
      kind,
      limit,
      used,
      requested: c.tokens,
      retryAfterMs: Math.max(1, retryAfterMs),
      tooLarge,
      use: this.use(c.limits, now),
    });
    // A request that reserves again (a better prompt count) was counted already: it is not a second request.
    if (rpm !== undefined && !held && this.log.size >= rpm) {
      const oldest = this.nth(this.log.size - rpm) as Admission;
      return refuse('requests', rpm, this.log.size, oldest.at + this.windowMs - now);
    }
    if (tpm !== undefined) {
      if (c.tokens > tpm) return refuse('tokens', tpm, this.tokenSum, this.windowMs, true);
      const used = this.tokenSum - (held?.tokens ?? 0);
      if (used + c.tokens > tpm) return refuse('tokens', tpm, used, this.freedAt(used + c.tokens - tpm, c.requestId) - now);
    }
    if (maxConcurrent !== undefined && !this.inFlight.has(c.requestId) && this.inFlight.size >= maxConcurrent) {
      return refuse('concurrent', maxConcurrent, this.inFlight.size, CONCURRENCY_RETRY_MS);
    }
    return undefined;
  }

  /** Counts an admitted request (after check passed): its window entry, its tokens, its slot. */
  commit(c: LimitCheck, now: number): LevelUse {
    const { rpm, tpm, maxConcurrent } = c.limits;
    if (rpm !== undefined || tpm !== undefined) {
      const held = this.log.get(c.requestId);
      const tokens = tpm !== undefined ? c.tokens : 0;
      if (held) {
        this.tokenSum += tokens - held.tokens;
        held.tokens = tokens;
      } else {
        this.log.set(c.requestId, { at: now, tokens });
        this.tokenSum += tokens;
        this.newestAt = now;
      }
    }
    if (maxConcurrent !== undefined) this.inFlight.set(c.requestId, now + c.leaseMs);
    return this.use(c.limits, now);
  }

  admit(level: LimitLevel, c: LimitCheck, now: number): AdmitResult {
    const refusal = this.check(level, c, now);
    return refusal ? { kind: 'rate_limited', refusal } : { kind: 'admitted', use: this.commit(c, now) };
  }

  /** Settles, releases or undoes a request's hold (see LimitEnd). */
  end(requestId: string, how: LimitEnd, now: number): void {
    this.purge(now);
    this.inFlight.delete(requestId);
    const held = this.log.get(requestId);
    if (!held) return;
    if (how.kind === 'undo') {
      this.log.delete(requestId);
      this.tokenSum -= held.tokens;
      if (held.at === this.newestAt) this.newestAt = [...this.log.values()].reduce((m, a) => Math.max(m, a.at), 0);
      return;
    }
    // Only a tpm-counted entry is corrected (its tokens are 0 when the level counts requests alone).
    if (held.tokens === 0) return;
    const tokens = how.kind === 'settle' ? how.tokens : 0;
    this.tokenSum += tokens - held.tokens;
    held.tokens = tokens;
  }

  renew(requestId: string, leaseMs: number, now: number): void {
    if (this.inFlight.has(requestId)) this.inFlight.set(requestId, now + leaseMs);
  }

  use(limits: Limits, now: number): LevelUse {
    this.purge(now);
    const out: LevelUse = {};
    // Every use leaves the window one window after the newest was admitted.
    const resetMs = this.log.size > 0 ? Math.max(0, this.newestAt + this.windowMs - now) : 0;
    if (limits.rpm !== undefined) out.requests = { limit: limits.rpm, remaining: Math.max(0, limits.rpm - this.log.size), resetMs };
    if (limits.tpm !== undefined) out.tokens = { limit: limits.tpm, remaining: Math.max(0, limits.tpm - this.tokenSum), resetMs };
    if (limits.maxConcurrent !== undefined) out.concurrent = { limit: limits.maxConcurrent, inFlight: this.inFlight.size };
    return out;
  }

  private purge(now: number): void {
    for (const [id, a] of this.log) {
      if (a.at > now - this.windowMs) break;
      this.log.delete(id);
      this.tokenSum -= a.tokens;
    }
    for (const [id, deadline] of this.inFlight) if (deadline <= now) this.inFlight.delete(id);
  }

  private nth(index: number): Admission | undefined {
    let i = 0;
    for (const a of this.log.values()) if (i++ === index) return a;
    return undefined;
  }

  /** When enough tokens will have left the window (oldest first, not counting this request's own). */
  private freedAt(need: number, requestId: string): number {
    let freed = 0;
    for (const [id, a] of this.log) {
      if (id === requestId) continue;
      freed += a.tokens;
      if (freed >= need) return a.at + this.windowMs;
    }
    return Infinity;
  }
}

/** One level of a request as the memory store keeps it: its limits and its window. */
export interface HeldLevel {
  level: LimitLevel;
  limits: Limits;
  window: LimitWindow;
}

/** Checks every level, then (only when all pass) counts the request on each: one refusal counts nowhere. */
export function admitAll(levels: readonly HeldLevel[], c: Omit<LimitCheck, 'limits'>, now: number): AdmitAllResult {
  for (const l of levels) {
    const refusal = l.window.check(l.level, { ...c, limits: l.limits }, now);
    if (refusal) return { kind: 'rate_limited', refusal };
  }
  return { kind: 'admitted', uses: levels.map((l) => l.window.commit({ ...c, limits: l.limits }, now)) };
}

export type AdmitAllResult = { kind: 'admitted'; uses: LevelUse[] } | { kind: 'rate_limited'; refusal: LimitRefusal };
