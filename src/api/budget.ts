/** A budget as every API shows it: on keys and accounts, with what the current period has used of it. */
import { z } from 'zod';
import { budgetPeriod, type BudgetStatus, type budgetWire } from '../limits/budget';
import { tokenCount, unixTime } from './fields';

/** `{tokens, period}`, as every API takes a budget (src/limits/budget.ts reads it). */
export type BudgetRequest = z.input<typeof budgetWire>;

export const budgetSchema = z.strictObject({
  /** Charged tokens allowed per period. */
  tokens: tokenCount,
  period: budgetPeriod,
  /** Tokens charged in this period. */
  spent: tokenCount,
  /** Tokens held in this period by requests in flight. */
  reserved: tokenCount,
  /** When the next period starts, and the budget is whole again. */
  resets_at: unixTime,
});
export type BudgetObject = z.infer<typeof budgetSchema>;

export function budgetObject(b: BudgetStatus): BudgetObject {
  return { tokens: b.tokens, period: b.period, spent: b.spent, reserved: b.reserved, resets_at: b.resetsAt };
}
