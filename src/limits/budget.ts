/**
 * Budgets that reset: at most `tokens` charged tokens per UTC calendar day, week (from Monday) or month, on a key or
 * an account. What a budget is, its periods' bounds, how the stores keep it, and how its use reads.
 */
import { z } from 'zod';
import type { UnixSeconds } from '../store/records/common';

/** A UTC calendar day, week (from Monday) or month. */
export const budgetPeriod = z.enum(['day', 'week', 'month'], { error: "must be 'day', 'week' or 'month'" });
export type BudgetPeriod = z.infer<typeof budgetPeriod>;

/** The wire shape, as every API takes a budget: at most `tokens` charged tokens per period. */
export const budgetWire = z.strictObject({
  tokens: z
    .number({ error: 'must be a whole number of tokens' })
    .int('must be a whole number of tokens')
    .positive('must be at least 1')
    .max(Number.MAX_SAFE_INTEGER),
  period: budgetPeriod,
});

export interface Budget {
  /** Charged (weighted) tokens allowed per period. */
  tokens: number;
  period: BudgetPeriod;
}

/** A budget and its use in the period in force. */
export interface BudgetStatus extends Budget {
  /** Tokens charged in this period by settled requests. */
  spent: number;
  /** Tokens held in this period by requests in flight. */
  reserved: number;
  periodStart: UnixSeconds;
  /** When the next period starts, and the budget is whole again. */
  resetsAt: UnixSeconds;
}

/** A request a budget refused: nothing was reserved or counted. */
export interface BudgetRefusal {
  level: 'key' | 'account';
  budget: Budget;
  /** Charged and reserved tokens in the current period. */
  used: number;
  /** The least the request needs (its prompt and one completion token per choice). */
  requested: number;
  resetsAt: UnixSeconds;
}

const DAY = 86_400;

/** The start of the UTC period holding `ms`: midnight, Monday midnight, or the 1st of the month at midnight. */
export function periodStart(period: BudgetPeriod, ms: number): UnixSeconds {
  const day = Math.floor(ms / (DAY * 1000));
  if (period === 'day') return day * DAY;
  // 1970-01-01 was a Thursday, three days after a Monday.
  if (period === 'week') return (day - ((day + 3) % 7)) * DAY;
  const d = new Date(day * DAY * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
}

/** The start of the period after the one starting at `start`. */
export function periodEnd(period: BudgetPeriod, start: UnixSeconds): UnixSeconds {
  if (period === 'day') return start + DAY;
  if (period === 'week') return start + 7 * DAY;
  const d = new Date(start * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}

/** The three periods' starts at `ms`, in the order the Redis scripts take them (day, week, month). */
export function periodStarts(ms: number): [UnixSeconds, UnixSeconds, UnixSeconds] {
  return [periodStart('day', ms), periodStart('week', ms), periodStart('month', ms)];
}

/**
 * The end of the month in force at `ms` and of the month after: what the Redis scripts need to say when a monthly
 * budget resets (day and week ends are sums; a later clock's counters may be in the next month).
 */
export function monthEnds(ms: number): readonly [UnixSeconds, UnixSeconds] {
  const start = periodStart('month', ms);
  if (start !== lastMonth.start) {
    const end = periodEnd('month', start);
    lastMonth = { start, ends: [end, periodEnd('month', end)] };
  }
  return lastMonth.ends;
}
/** Per period, the ends of the one in force at `ms` and of the next (the Redis budget events take them). */
export function periodEnds(ms: number): Record<BudgetPeriod, readonly [UnixSeconds, UnixSeconds]> {
  const [day, week] = periodStarts(ms);
  const dayEnd = periodEnd('day', day);
  const weekEnd = periodEnd('week', week);
  return { day: [dayEnd, periodEnd('day', dayEnd)], week: [weekEnd, periodEnd('week', weekEnd)], month: monthEnds(ms) };
}
/** monthEnds' last answer: every settlement while events are written asks it, and the month changes monthly. */
let lastMonth: { start: UnixSeconds; ends: readonly [UnixSeconds, UnixSeconds] } = { start: -1, ends: [0, 0] };

/**
 * A budget's counters as both stores keep them: the start of the period they count, the tokens settled requests were
 * charged there, and the tokens requests in flight hold there.
 */
export interface BudgetCounters {
  start: UnixSeconds;
  spent: number;
  held: number;
}

/**
 * The budget's status at `ms`. Counters of an earlier period count nothing; counters of a later one (another
 * process's clock ahead of ours) are the period in force, so no process ever turns them back.
 */
export function budgetStatus(budget: Budget, counters: BudgetCounters | undefined, ms: number): BudgetStatus {
  const now = periodStart(budget.period, ms);
  const current = counters !== undefined && counters.start >= now;
  const start = current ? counters.start : now;
  return {
    ...budget,
    spent: current ? counters.spent : 0,
    reserved: current ? counters.held : 0,
    periodStart: start,
    resetsAt: periodEnd(budget.period, start),
  };
}

/** The form kept in a store hash (field `bg`): "tokens:period"; "" for none. */
export function encodeBudget(b: Budget | null | undefined): string {
  return b ? `${b.tokens}:${b.period}` : '';
}

export function decodeBudget(s: string | undefined): Budget | null {
  const m = s ? /^(\d+):(day|week|month)$/.exec(s) : null;
  return m ? { tokens: Number(m[1]), period: m[2] as BudgetPeriod } : null;
}
