/** The Redis store's model-level limits (limit-scripts.ts), and the one place their replies' shapes are checked. */
import type { Cluster, Redis } from 'ioredis';
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, LimitKind, LimitLevel, LimitRefusal, Limits } from '../../limits/limits';
import { defineScripts } from './define-scripts';
import * as limitScripts from './scripts/limit-scripts';

/** A limit script's reply of a shape none of ours returns. */
export class LimitReplyError extends Error {
  override name = 'LimitReplyError';
}

export class RedisModelLimits {
  private readonly run;

  constructor(
    redis: Redis | Cluster,
    private readonly prefix: string,
    private readonly windowMs: number,
  ) {
    this.run = defineScripts(redis, {
      tmLimitAdmit: limitScripts.LIMIT_ADMIT,
      tmLimitEnd: limitScripts.LIMIT_END,
      tmLimitRenew: limitScripts.LIMIT_RENEW,
      tmLimitUse: limitScripts.LIMIT_USE,
    });
  }

  /** A model's keys share the hash tag `{m:<model id>}`: its own slot, apart from every account's. */
  private keys(model: string): string[] {
    const base = `${this.prefix}{m:${model}}:`;
    return [`${base}lw`, `${base}lt`, `${base}lc`];
  }

  async admit(model: string, c: LimitCheck): Promise<AdmitResult> {
    const { rpm = 0, tpm = 0, maxConcurrent = 0 } = c.limits;
    const reply = await this.run.tmLimitAdmit(this.keys(model), [c.requestId, c.tokens, c.leaseMs, this.windowMs, rpm, tpm, maxConcurrent]);
    return parseAdmitReply(reply, 'model', c.tokens);
  }

  async end(model: string, requestId: string, how: LimitEnd): Promise<void> {
    await this.run.tmLimitEnd(this.keys(model), [requestId, how.kind, how.kind === 'settle' ? how.tokens : 0, this.windowMs]);
  }

  async renew(model: string, requestId: string, leaseMs: number): Promise<void> {
    await this.run.tmLimitRenew([this.keys(model)[2]], [requestId, leaseMs]);
  }

  async use(model: string, limits: Limits): Promise<LevelUse> {
    const { rpm = 0, tpm = 0, maxConcurrent = 0 } = limits;
    const reply = await this.run.tmLimitUse(this.keys(model), [this.windowMs, rpm, tpm, maxConcurrent]);
    if (!Array.isArray(reply)) throw new LimitReplyError(`LIMIT_USE replied ${JSON.stringify(reply)}`);
    return parseLevelUse(reply, 0);
  }
}

const KINDS = new Set<string>(['requests', 'tokens', 'concurrent']);

/** An admission reply: {'ok', use...} | {'limited', kind, limit, used, retry ms, too large, use...}. */
export function parseAdmitReply(reply: unknown, level: LimitLevel, tokens: number): AdmitResult {
  if (Array.isArray(reply) && reply[0] === 'ok' && reply.length === 8) return { kind: 'admitted', use: parseLevelUse(reply, 1) };
  if (Array.isArray(reply) && reply[0] === 'limited' && reply.length === 13) {
    return { kind: 'rate_limited', refusal: parseRefusal(reply, 1, level, tokens) };
  }
  throw new LimitReplyError(`limit admission replied ${JSON.stringify(reply)}`);
}

/** lim_check's refusal followed by lim_use's list, from `at`: 12 values. */
export function parseRefusal(reply: unknown[], at: number, level: LimitLevel, tokens: number): LimitRefusal {
  if (!KINDS.has(reply[at] as string)) throw new LimitReplyError(`a limit refusal of kind ${JSON.stringify(reply[at])}`);
  return {
    level,
    kind: reply[at] as LimitKind,
    limit: Number(reply[at + 1]),
    used: Number(reply[at + 2]),
    requested: tokens,
    retryAfterMs: Math.max(1, Number(reply[at + 3])),
    tooLarge: Number(reply[at + 4]) === 1,
    use: parseLevelUse(reply, at + 5),
  };
}

/** lim_use's list from `at`: {rpm, requests, tpm, tokens, reset ms, max_concurrent, in flight}; a 0 limit is none. */
export function parseLevelUse(reply: unknown[], at: number): LevelUse {
  const [rpm, requests, tpm, tokens, resetMs, cc, inFlight] = reply.slice(at, at + 7).map(Number);
  const use: LevelUse = {};
  const reset = Math.max(0, resetMs);
  if (rpm > 0) use.requests = { limit: rpm, remaining: Math.max(0, rpm - requests), resetMs: reset };
  if (tpm > 0) use.tokens = { limit: tpm, remaining: Math.max(0, tpm - tokens), resetMs: reset };
  if (cc > 0) use.concurrent = { limit: cc, inFlight };
  return use;
}
