/**
 * The Redis store's metering path: reserve, renew, release and settle, each one script of lua/metering/ on the
 * account's slot. The layer of RedisStore (redis-store.ts) above the model limits; it names the keys of an account's
 * slot (layout: lua/README.md), which the key and account layers use too.
 */
import type { Cluster, Redis } from 'ioredis';
import { monthEnds, periodStarts } from '../../limits/budget';
import type { MeteringStore } from '../ports/metering-store';
import { SETTLE_DEDUP_SECONDS, type ReserveRequest, type ReserveResult, type Settlement, type SettleResult } from '../records/metering';
import { luaScript, luaWithEvents } from './lua-scripts';
import { defineScripts } from './define-scripts';
import { compactUuid, newId } from '../ids';
import { usageSettledData } from '../records/events';
import { ROLLUP_DAYS } from '../records/rollups';
import type { RedisStoreOptions } from './redis-model-limits';
import { RedisOutbox } from './redis-outbox';
import { StoreReplyError, parseReserveReply, tuple } from './redis-records';

const DUPLICATE: SettleResult = { kind: 'duplicate' };

export abstract class RedisMetering extends RedisOutbox implements MeteringStore {
  private readonly meteringScripts;

  constructor(redis: Redis | Cluster, options: RedisStoreOptions = {}) {
    super(redis, options);
    this.meteringScripts = defineScripts(redis, {
      tmReserve: luaScript('metering/reserve.lua'),
      tmReserveEv: luaWithEvents('metering/reserve.lua', { after: 'events/after-reserve.lua' }),
      tmRenew: luaScript('metering/renew.lua'),
      tmRelease: luaScript('metering/release.lua'),
      tmSettle: luaScript('metering/settle.lua'),
      tmSettleEv: luaWithEvents('metering/settle.lua', { after: 'events/after-settle.lua' }),
    });
  }

  /** A key of account `accountId`'s slot. */
  protected a(accountId: string, part: string): string {
    return `${this.prefix}{${accountId}}:${part}`;
  }

  /** A key outside any account's slot. */
  protected global(name: string): string {
    return `${this.prefix}${name}`;
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const A = r.accountId;
    const now = this.now();
    const keys = [this.a(A, 'a'), this.a(A, `k:${r.keyId ?? ''}`), this.a(A, 'p'), this.a(A, 'r'), this.a(A, 'ra')];
    const args = [
      r.requestId,
      r.fixed,
      r.unit,
      r.allowance,
      r.leaseMs,
      r.model,
      r.keyId ?? '',
      this.windowMs,
      r.defaultAllowance ? 1 : 0,
      ...periodStarts(now),
    ];
    // Without events (no delivery worker), the plain RESERVE; else the wrapped one, which marks the account's outbox
    // only after a budget's refusal wrote budget.exceeded.
    if (!this.wanted('budget.exceeded')) return parseReserveReply(await this.meteringScripts.tmReserve(keys, args));
    return parseReserveReply(await this.runWrapped(this.meteringScripts.tmReserveEv, A, keys, args, [newId('evt'), ...monthEnds(now)]));
  }

  async renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean> {
    const keys = [this.a(accountId, 'a'), this.a(accountId, 'r'), this.a(accountId, 'ra')];
    return Number(await this.meteringScripts.tmRenew(keys, [requestId, leaseMs])) === 1;
  }

  async release(accountId: string, requestId: string): Promise<void> {
    await this.meteringScripts.tmRelease(
      [this.a(accountId, 'a'), this.a(accountId, 'r'), this.a(accountId, 'ra')],
      [requestId, this.windowMs],
    );
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const A = s.accountId;
    const now = this.now();
    const usage = this.wanted('usage.settled');
    const low = this.wanted('balance.low');
    const budgets = this.wanted('budget.threshold') || this.wanted('budget.exceeded');
    const events = usage || low || budgets;
    const keys = [
      this.a(A, 'a'),
      this.a(A, `k:${s.keyId ?? ''}`),
      this.a(A, 'p'),
      this.a(A, 'r'),
      this.a(A, 'ra'),
      this.a(A, `s:${s.requestId}`),
      this.a(A, 'u'),
      this.a(A, 't'),
    ];
    const args = [
      s.requestId,
      s.chargedTokens,
      s.promptTokens,
      s.completionTokens,
      s.model,
      s.estimated ? 1 : 0,
      s.stream ? 1 : 0,
      s.status,
      SETTLE_DEDUP_SECONDS,
      s.keyId ?? '',
      this.windowMs,
      ...periodStarts(now),
      s.endpoint ?? 'chat',
      s.cachedTokens ?? 0,
      s.reasoningTokens ?? 0,
      s.toolCalls ?? 0,
      s.toolTokens ?? 0,
      compactUuid(s.requestId),
      ROLLUP_DAYS,
    ];
    // Without events (beside a host's serving store), the plain SETTLE.
    const reply = events ? await this.settleWithEvents(keys, args, s, now) : await this.meteringScripts.tmSettle(keys, args);
    const [tag, , balance] = tuple(reply, 'SETTLE');
    if (tag === 'ok') return { kind: 'settled', balance: Number(balance) };
    if (tag === 'duplicate') return DUPLICATE;
    throw new StoreReplyError(`SETTLE replied ${String(tag)}`);
  }

  private async settleWithEvents(keys: string[], args: (string | number)[], s: Settlement, now: number) {
    const usage = this.wanted('usage.settled');
    const low = this.wanted('balance.low');
    const threshold = this.wanted('budget.threshold');
    const exceeded = this.wanted('budget.exceeded');
    return this.runWrapped(this.meteringScripts.tmSettleEv, s.accountId, keys, args, [
      usage ? 1 : 0,
      s.requestId,
      usage ? usageSettledData(s) : '',
      low ? 1 : 0,
      low ? newId('evt') : '',
      this.wants.lowBalanceTokens,
      threshold ? 1 : 0,
      exceeded ? 1 : 0,
      threshold || exceeded ? newId('evt') : '',
      ...(threshold || exceeded ? monthEnds(now) : [0, 0]),
    ]);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }
}
