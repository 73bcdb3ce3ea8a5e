/**
 * The memory store's budgets (the Redis scripts do the same in lua/helpers/budgets.lua): a key's or an account's counters
 * of the period in force, held at reserve, given back when a request lets go, charged at settle.
 */
import { periodStart, type Budget, type BudgetCounters } from '../../limits/budget';

/** A key or an account: its budget and the counters of the last period it counted. */
export interface Budgeted {
  budget: Budget | null;
  counters?: BudgetCounters;
  /** The period start budget.threshold and budget.exceeded were last written for (memory-outbox.ts). */
  notified?: { threshold?: number; exceeded?: number };
}

/** A level's budget as the reserve and settle steps read it. */
export interface BudgetView {
  level: 'key' | 'account';
  owner: Budgeted;
  budget: Budget;
  /** The period in force: now's, or a later one another clock already counts in. */
  start: number;
  /** Tokens charged and held there. */
  used: number;
  /** The counters are of an earlier period: the first hold or charge starts them afresh. */
  fresh: boolean;
}

/** What a reservation holds of each level's budget: the start of the period it counted in. */
export interface BudgetHolds {
  key?: number;
  account?: number;
}

/** The key's and the account's budgets at `ms` (key first); undefined when neither has one. */
export function budgetViews(key: Budgeted | undefined, account: Budgeted, ms: number): BudgetView[] | undefined {
  let out: BudgetView[] | undefined;
  if (key?.budget) (out ??= []).push(view('key', key, key.budget, ms));
  if (account.budget) (out ??= []).push(view('account', account, account.budget, ms));
  return out;
}

function view(level: BudgetView['level'], owner: Budgeted, budget: Budget, ms: number): BudgetView {
  const now = periodStart(budget.period, ms);
  const c = owner.counters;
  const fresh = c === undefined || c.start < now;
  return { level, owner, budget, start: fresh ? now : c.start, used: fresh ? 0 : c.spent + c.held, fresh };
}

/** Counts an admitted request's reservation on each budget; what the reservation then holds. */
export function holdBudgets(views: readonly BudgetView[], amount: number): BudgetHolds {
  const holds: BudgetHolds = {};
  for (const v of views) {
    if (v.fresh) v.owner.counters = { start: v.start, spent: 0, held: amount };
    else (v.owner.counters as BudgetCounters).held += amount;
    holds[v.level] = v.start;
  }
  return holds;
}

/** Gives back what a reservation held of a budget, when its period is still the one counted. */
export function unholdBudget(owner: Budgeted | undefined, start: number | undefined, amount: number): void {
  if (start !== undefined && owner?.counters?.start === start) owner.counters.held -= amount;
}

/**
 * Charges a settled request to each budget: in the period its reservation counted in, or, when it held nothing there
 * (its lease lapsed, or the budget came after), in the period in force. A period that is over takes nothing more.
 */
export function chargeBudgets(views: readonly BudgetView[], holds: BudgetHolds | undefined, charged: number): void {
  for (const v of views) {
    const counted = holds?.[v.level];
    if (counted !== undefined && counted !== v.start) continue;
    if (v.fresh) v.owner.counters = { start: v.start, spent: charged, held: 0 };
    else (v.owner.counters as BudgetCounters).spent += charged;
  }
}
