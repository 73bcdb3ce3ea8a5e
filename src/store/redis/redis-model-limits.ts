/**
 * The Redis store's model level of rate and concurrency limits (lua/limits/), in each model's own slot: a part of
 * RedisStore (redis-store.ts).
 */
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, Limits } from '../../limits/limits';
import type { ModelLimitStore } from '../ports/model-limit-store';
import { luaScript } from './lua-scripts';
import type { RedisShared } from './redis-shared';
import { defineScripts } from './define-scripts';
import { LimitReplyError, parseAdmitReply, parseLevelUse } from './limit-replies';

export class RedisModelLimits implements ModelLimitStore {
  private readonly limitScripts;

  constructor(private readonly shared: RedisShared) {
    this.limitScripts = defineScripts(shared.redis, {
      tmLimitAdmit: luaScript('limits/limit-admit.lua'),
      tmLimitEnd: luaScript('limits/limit-end.lua'),
      tmLimitRenew: luaScript('limits/limit-renew.lua'),
      tmLimitUse: luaScript('limits/limit-use.lua'),
    });
  }

  async admitModel(model: string, c: LimitCheck): Promise<AdmitResult> {
    const { rpm = 0, tpm = 0, maxConcurrent = 0 } = c.limits;
    const input = { id: c.requestId, tokens: c.tokens, lease_ms: c.leaseMs, window_ms: this.shared.windowMs, rpm, tpm, cc: maxConcurrent };
    return parseAdmitReply(await this.limitScripts.tmLimitAdmit(this.shared.keys.model(model), [JSON.stringify(input)]), 'model', c.tokens);
  }

  async endModel(model: string, requestId: string, how: LimitEnd): Promise<void> {
    const tokens = how.kind === 'settle' ? how.tokens : 0;
    await this.limitScripts.tmLimitEnd(this.shared.keys.model(model), [requestId, how.kind, tokens, this.shared.windowMs]);
  }

  async renewModel(model: string, requestId: string, leaseMs: number): Promise<void> {
    await this.limitScripts.tmLimitRenew([this.shared.keys.model(model)[2]], [requestId, leaseMs]);
  }

  async modelUse(model: string, limits: Limits): Promise<LevelUse> {
    const { rpm = 0, tpm = 0, maxConcurrent = 0 } = limits;
    const reply = await this.limitScripts.tmLimitUse(this.shared.keys.model(model), [this.shared.windowMs, rpm, tpm, maxConcurrent]);
    if (!Array.isArray(reply)) throw new LimitReplyError(`LIMIT_USE replied ${JSON.stringify(reply)}`);
    return parseLevelUse(reply, 0);
  }
}
