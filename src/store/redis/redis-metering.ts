/**
 * The Redis store's metering path: reserve, renew, release and settle, each one script of metering-scripts.ts on the
 * account's slot.
 */
import type { Cluster, Redis } from 'ioredis';
import { defineScripts } from './define-scripts';
import { StoreReplyError, parseReserveReply, tuple } from './redis-records';
import * as meteringScripts from './scripts/metering-scripts';
import { SETTLE_DEDUP_SECONDS, type ReserveRequest, type ReserveResult, type Settlement, type SettleResult } from '../records/metering';

export class RedisMetering {
  private readonly run;

  /** `a(accountId, part)`: the store's name of a key in the account's slot. */
  constructor(
    redis: Redis | Cluster,
    private readonly a: (accountId: string, part: string) => string,
    private readonly windowMs: number,
  ) {
    this.run = defineScripts(redis, {
      tmReserve: meteringScripts.RESERVE,
      tmRenew: meteringScripts.RENEW,
      tmRelease: meteringScripts.RELEASE,
      tmSettle: meteringScripts.SETTLE,
    });
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const A = r.accountId;
    const reply = await this.run.tmReserve(
      [this.a(A, 'a'), this.a(A, `k:${r.keyId ?? ''}`), this.a(A, 'p'), this.a(A, 'r'), this.a(A, 'ra')],
      [r.requestId, r.fixed, r.unit, r.allowance, r.leaseMs, r.model, r.keyId ?? '', this.windowMs, r.defaultAllowance ? 1 : 0],
    );
    return parseReserveReply(reply);
  }

  async renew(accountId: string, requestId: string, leaseMs: number): Promise<boolean> {
    const keys = [this.a(accountId, 'a'), this.a(accountId, 'r'), this.a(accountId, 'ra')];
    return Number(await this.run.tmRenew(keys, [requestId, leaseMs])) === 1;
  }

  async release(accountId: string, requestId: string): Promise<void> {
    await this.run.tmRelease([this.a(accountId, 'a'), this.a(accountId, 'r'), this.a(accountId, 'ra')], [requestId, this.windowMs]);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    const A = s.accountId;
    const reply = await this.run.tmSettle(
      [
        this.a(A, 'a'),
        this.a(A, `k:${s.keyId ?? ''}`),
        this.a(A, 'p'),
        this.a(A, 'r'),
        this.a(A, 'ra'),
        this.a(A, `s:${s.requestId}`),
        this.a(A, 'u'),
        this.a(A, 't'),
      ],
      [
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
      ],
    );
    const [tag] = tuple(reply, 'SETTLE');
    if (tag === 'ok') return 'settled';
    if (tag === 'duplicate') return 'duplicate';
    throw new StoreReplyError(`SETTLE replied ${String(tag)}`);
  }
}
