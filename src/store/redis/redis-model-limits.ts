/**
 * The Redis store's model level of rate and concurrency limits (lua/limits/), in each model's own slot. The
 * bottom layer of RedisStore (redis-store.ts): it holds the connection, the key prefix and the limit window.
 */
import type { Cluster, Redis } from 'ioredis';
import { DEFAULT_WINDOW_MS, type AdmitResult, type LevelUse, type LimitCheck, type LimitEnd, type Limits } from '../../limits/limits';
import type { ModelLimitStore } from '../ports/model-limit-store';
import { luaScript } from './lua-scripts';
import { defineScripts } from './define-scripts';
import { LimitReplyError, parseAdmitReply, parseLevelUse } from './limit-replies';

export interface RedisStoreOptions {
  /** Prefix of every key we write. Default `tm:`. */
  prefix?: string;
  /** Length of the rpm and tpm windows. Default 60 s. */
  limitWindowMs?: number;
  /**
   * The clock of the budgets' periods, in ms (the scripts take the periods' starts from it; leases and expiry keep
   * the server's TIME). Default Date.now.
   */
  now?: () => number;
}

export abstract class RedisModelLimits implements ModelLimitStore {
  protected readonly prefix: string;
  protected readonly windowMs: number;
  protected readonly now: () => number;
  private readonly limitScripts;

  constructor(
    protected readonly redis: Redis | Cluster,
    options: RedisStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? 'tm:';
    this.windowMs = options.limitWindowMs ?? DEFAULT_WINDOW_MS;
    this.now = options.now ?? Date.now;
    this.limitScripts = defineScripts(redis, {
      tmLimitAdmit: luaScript('limits/limit-admit.lua'),
      tmLimitEnd: luaScript('limits/limit-end.lua'),
      tmLimitRenew: luaScript('limits/limit-renew.lua'),
      tmLimitUse: luaScript('limits/limit-use.lua'),
    });
  }

  /** A model's keys share the hash tag `{m:<model id>}`: its own slot, apart from every account's. */
  private modelKeys(model: string): string[] {
    const base = `${this.prefix}{m:${model}}:`;
    return [`${base}lw`, `${base}lt`, `${base}lc`];
  }

  async admitModel(model: string, c: LimitCheck): Promise<AdmitResult> {
    const { rpm = 0, tpm = 0, maxConcurrent = 0 } = c.limits;
    const input = { id: c.requestId, tokens: c.tokens, lease_ms: c.leaseMs, window_ms: this.windowMs, rpm, tpm, cc: maxConcurrent };
    return parseAdmitReply(await this.limitScripts.tmLimitAdmit(this.modelKeys(model), [JSON.stringify(input)]), 'model', c.tokens);
  }

  async endModel(model: string, requestId: string, how: LimitEnd): Promise<void> {
    const tokens = how.kind === 'settle' ? how.tokens : 0;
    await this.limitScripts.tmLimitEnd(this.modelKeys(model), [requestId, how.kind, tokens, this.windowMs]);
  }

  async renewModel(model: string, requestId: string, leaseMs: number): Promise<void> {
    await this.limitScripts.tmLimitRenew([this.modelKeys(model)[2]], [requestId, leaseMs]);
  }

  async modelUse(model: string, limits: Limits): Promise<LevelUse> {
    const { rpm = 0, tpm = 0, maxConcurrent = 0 } = limits;
    const reply = await this.limitScripts.tmLimitUse(this.modelKeys(model), [this.windowMs, rpm, tpm, maxConcurrent]);
    if (!Array.isArray(reply)) throw new LimitReplyError(`LIMIT_USE replied ${JSON.stringify(reply)}`);
    return parseLevelUse(reply, 0);
  }
}
