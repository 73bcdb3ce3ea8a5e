/** What a client sees when a budget refuses a request: a 429 `budget_exceeded` that says when the budget resets. */
import { apiError, type ApiError } from '../http/errors';
import type { BudgetPeriod, BudgetRefusal } from './budget';

const ADJECTIVE: Record<BudgetPeriod, string> = { day: 'daily', week: 'weekly', month: 'monthly' };

/** The 429 and its header `x-budget-reset` (ISO 8601, UTC); `x-should-retry: false` comes with the code. */
export function budgetRefusal(r: BudgetRefusal): { error: ApiError; headers: Record<string, string> } {
  const resets = new Date(r.resetsAt * 1000).toISOString().replace('.000Z', 'Z');
  const whose = r.level === 'key' ? "This key's" : "This account's";
  const message =
    `${whose} ${ADJECTIVE[r.budget.period]} budget of ${r.budget.tokens} tokens cannot cover the request: used ${r.used}, ` +
    `requested at least ${r.requested}. It resets at ${resets}.`;
  return { error: apiError('budget_exceeded', message), headers: { 'x-budget-reset': resets } };
}
