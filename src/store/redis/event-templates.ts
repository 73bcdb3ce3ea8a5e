/**
 * The payloads of the events a Redis step writes with values only it knows (a balance, a budget's spend): made by the
 * builders the memory store uses (records/events.ts), with those fields turned into `"$name"` slots that the step
 * fills in (lua/helpers/fill.lua). So each payload's shape is written once, in TypeScript.
 */
import { periodEnds } from '../../limits/budget';
import { newId } from '../ids';
import { BUDGET_THRESHOLD, budgetEventData, lowBalanceData, packageExpiryData, type LowBalanceDefault } from '../records/events';

/** `data` (a payload's JSON) with the top-level fields named in `slots` turned into `"$name"` slots. */
export function payloadTemplate(data: string, slots: readonly string[]): string {
  const payload = JSON.parse(data) as Record<string, unknown>;
  for (const name of slots) payload[name] = `$${name}`;
  return JSON.stringify(payload);
}

/**
 * balance.low's arguments (lua/events/prologue.lua, ev_low_balance): an event id, the default threshold (tokens, ""
 * when unset, else percent of the last grant), the payload.
 */
export function lowBalanceEvent(accountId: string, d: LowBalanceDefault) {
  return {
    id: newId('evt'),
    tokens: d.tokens ?? '',
    share: { numerator: d.percent, denominator: 100 },
    data: payloadTemplate(lowBalanceData(accountId, 0, 0), ['balance', 'threshold']),
  };
}

const BUDGET_SLOTS = ['tokens', 'period', 'spent', 'period_start', 'resets_at'] as const;

/**
 * budget.threshold's and budget.exceeded's arguments (lua/events/prologue.lua, ev_budget): which are wanted, a base
 * event id, the threshold's share of the budget, the periods' ends at `ms`, and one payload per level.
 */
export function budgetEvents(accountId: string, keyId: string | null, want: { threshold: boolean; exceeded: boolean }, ms: number) {
  const data = (level: 'key' | 'account') =>
    payloadTemplate(
      budgetEventData({
        accountId,
        keyId: level === 'key' ? keyId : null,
        level,
        tokens: 0,
        period: '',
        spent: 0,
        periodStart: 0,
        resetsAt: 0,
      }),
      BUDGET_SLOTS,
    );
  return {
    id: newId('evt'),
    ...want,
    share: BUDGET_THRESHOLD,
    ends: periodEnds(ms),
    data: { key: keyId === null ? '' : data('key'), account: data('account') },
  };
}

/** package.expiring's and package.expired's payload (lua/events/package-expiry.lua). */
export function packageExpiryTemplate(accountId: string): string {
  return payloadTemplate(packageExpiryData(accountId, { id: '', tokens: 0, remaining: 0, expiresAt: 0 }), [
    'package_id',
    'tokens',
    'remaining',
    'expires_at',
  ]);
}
