/**
 * The Redis store's metering path: reserve, renew, release and settle, each one script of lua/metering/ on the
 * account's slot. A part of RedisStore (redis-store.ts), writing its events through the outbox.
 */
import { ReplyError } from 'ioredis';
import { periodStarts } from '../../limits/budget';
import type { MeteringStore } from '../ports/metering-store';
import {
  SETTLE_CLOCK_SKEW_SECONDS,
  SETTLE_DEDUP_SECONDS,
  type ReserveRequest,
  type ReserveResult,
  type Settlement,
  type SettleResult,
} from '../records/metering';
import { luaScript, luaWithEvents } from './lua-scripts';
import { defineScripts, type RunScript } from './define-scripts';
import { GroupCommit, type SendGroup } from './group-commit';
import { compactKeyId, compactUuid } from '../ids';
import { budgetEvents, lowBalanceEvent } from './event-templates';
import { usageSettledData } from '../records/events';
import type { RedisOutbox } from './redis-outbox';
import type { RedisShared } from './redis-shared';
import { StoreReplyError, parseReserveReply, tuple } from './redis-records';

const DUPLICATE: SettleResult = { kind: 'duplicate' };
/**
 * Group commit (group-commit.ts): at most 16 reservations or settlements in one script call (a busy account's group is
 * split, so no script runs long); a group whose script failed (Redis replied an error: not a lost connection) is sent
 * again one by one, so one request's fault is its own.
 */
const GROUPS = { most: 16, oneItemsFault: (err: unknown) => err instanceof ReplyError };

/** One script call's keys and JSON input. */
interface ScriptCall {
  keys: string[];
  input: object;
}

/**
 * A group of one as the plain script, so a process at low load sends what it always did; more, as the group script,
 * whose step that erred replies {'failed', the error}: that request's error alone.
 */
function groupSender(one: RunScript, group: RunScript, name: string): SendGroup<ScriptCall> {
  return async (calls) => {
    if (calls.length === 1) return [await one(calls[0].keys, [JSON.stringify(calls[0].input)])];
    const reply = await group(
      calls.flatMap((c) => c.keys),
      [JSON.stringify(calls.map((c) => c.input))],
    );
    return tuple(reply, `${name} group`).map((r) =>
      Array.isArray(r) && r[0] === 'failed' ? new StoreReplyError(`${name} failed in its group: ${String(r[1])}`) : r,
    );
  };
}

/** The budgets' periods in force at `ms`, by name (the scripts' `starts`). */
function startsOf(ms: number): { day: number; week: number; month: number } {
  const [day, week, month] = periodStarts(ms);
  return { day, week, month };
}

export class RedisMetering implements MeteringStore {
  readonly kind = 'redis' as const;
  private readonly meteringScripts;
  /** Reservations and settlements without events: one script call per account and turn of the event loop. */
  private readonly reserves: GroupCommit<ScriptCall>;
  private readonly settles: GroupCommit<ScriptCall>;

  constructor(
    private readonly shared: RedisShared,
    private readonly outbox: RedisOutbox,
    /** Told of every account a settlement was recorded for (the rollup follower's next pass visits it). */
    private readonly recorded: (accountId: string) => void,
  ) {
    this.meteringScripts = defineScripts(shared.redis, {
      tmReserve: luaScript('metering/reserve.lua'),
      tmReserveEv: luaWithEvents('metering/reserve.lua', { after: 'events/after-reserve.lua' }),
      tmRenew: luaScript('metering/renew.lua'),
      tmRelease: luaScript('metering/release.lua'),
      tmSettle: luaScript('metering/settle.lua'),
      tmSettleEv: luaWithEvents('metering/settle.lua', { after: 'events/after-settle.lua' }),
      tmReserveGroup: luaScript('metering/reserve-group.lua'),
      tmSettleGroup: luaScript('metering/settle-group.lua'),
    });
    const scripts = this.meteringScripts;
    this.reserves = new GroupCommit(groupSender(scripts.tmReserve, scripts.tmReserveGroup, 'RESERVE'), GROUPS);
    this.settles = new GroupCommit(groupSender(scripts.tmSettle, scripts.tmSettleGroup, 'SETTLE'), GROUPS);
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const A = r.accountId;
    const now = this.shared.now();
    const keys = [
      this.shared.keys.slot(A, 'a'),
      this.shared.keys.slot(A, `k:${r.keyId ?? ''}`),
      this.shared.keys.slot(A, 'p'),
      this.shared.keys.slot(A, 'r'),
      this.shared.keys.slot(A, 'ra'),
    ];
    const input = {
      id: r.requestId,
      fixed: r.fixed,
      unit: r.unit,
      allowance: r.allowance,
      lease_ms: r.leaseMs,
      model: r.model,
      key_id: r.keyId ?? '',
      window_ms: this.shared.windowMs,
      default_allowance: r.defaultAllowance === true,
      starts: startsOf(now),
    };
    // Without events (no delivery worker), the plain RESERVE, grouped with the account's others of this turn; else the
    // wrapped one, alone, which marks the account's outbox only after a budget's refusal wrote budget.exceeded.
    if (!this.outbox.wanted('budget.exceeded')) return parseReserveReply(await this.reserves.add(A, { keys, input }));
    const budget = budgetEvents(A, r.keyId ?? null, { threshold: false, exceeded: true }, now);
    return parseReserveReply(await this.outbox.runWrapped(this.meteringScripts.tmReserveEv, A, keys, input, { budget }));
  }

  async renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean> {
    const keys = [this.shared.keys.slot(accountId, 'a'), this.shared.keys.slot(accountId, 'r'), this.shared.keys.slot(accountId, 'ra')];
    return Number(await this.meteringScripts.tmRenew(keys, [requestId, leaseMs])) === 1;
  }

  async release(accountId: string, requestId: string): Promise<void> {
    await this.meteringScripts.tmRelease(
      [this.shared.keys.slot(accountId, 'a'), this.shared.keys.slot(accountId, 'r'), this.shared.keys.slot(accountId, 'ra')],
      [requestId, this.shared.windowMs],
    );
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const A = s.accountId;
    const now = this.shared.now();
    const usage = this.outbox.wanted('usage.settled');
    const low = this.outbox.wanted('balance.low');
    const budgets = this.outbox.wanted('budget.threshold') || this.outbox.wanted('budget.exceeded');
    const events = usage || low || budgets;
    const keys = [
      this.shared.keys.slot(A, 'a'),
      this.shared.keys.slot(A, `k:${s.keyId ?? ''}`),
      this.shared.keys.slot(A, 'p'),
      this.shared.keys.slot(A, 'r'),
      this.shared.keys.slot(A, 'ra'),
      this.shared.keys.slot(A, `s:${s.requestId}`),
      this.shared.keys.slot(A, 'u'),
      this.shared.keys.slot(A, 't'),
    ];
    const input = {
      id: s.requestId,
      charged: s.chargedTokens,
      prompt: s.promptTokens,
      completion: s.completionTokens,
      cached: s.cachedTokens ?? 0,
      reasoning: s.reasoningTokens ?? 0,
      tool_calls: s.toolCalls ?? 0,
      tool_tokens: s.toolTokens ?? 0,
      model: s.model,
      endpoint: s.endpoint ?? 'chat',
      estimated: s.estimated ? 1 : 0,
      stream: s.stream ? 1 : 0,
      status: s.status,
      key_id: s.keyId ?? '',
      kid: s.keyId ? compactKeyId(s.keyId) : '',
      rid: compactUuid(s.requestId),
      ttl: SETTLE_DEDUP_SECONDS,
      skew: SETTLE_CLOCK_SKEW_SECONDS,
      window_ms: this.shared.windowMs,
      starts: startsOf(now),
    };
    // Without events (beside a host's serving store), the plain SETTLE, grouped with the account's others of this turn.
    const reply = events
      ? await this.outbox.runWrapped(this.meteringScripts.tmSettleEv, A, keys, input, this.settleEvents(s, now))
      : await this.settles.add(A, { keys, input });
    const [tag, , balance] = tuple(reply, 'SETTLE');
    if (tag === 'ok') {
      this.recorded(A);
      return { kind: 'settled', balance: Number(balance) };
    }
    if (tag === 'duplicate') return DUPLICATE;
    throw new StoreReplyError(`SETTLE replied ${String(tag)}`);
  }

  /** The events a settlement may write, as wanted (lua/events/after-settle.lua). */
  private settleEvents(s: Settlement, now: number) {
    const threshold = this.outbox.wanted('budget.threshold');
    const exceeded = this.outbox.wanted('budget.exceeded');
    return {
      usage: this.outbox.wanted('usage.settled') ? { id: s.requestId, data: usageSettledData(s) } : undefined,
      low: this.outbox.wanted('balance.low') ? lowBalanceEvent(s.accountId, this.outbox.lowBalance) : undefined,
      budget: threshold || exceeded ? budgetEvents(s.accountId, s.keyId ?? null, { threshold, exceeded }, now) : undefined,
    };
  }

  async ping(): Promise<void> {
    await this.shared.redis.ping();
  }
}
