/** The CLI's side of budgets: the --budget option (`100000/day`), the `budget` commands, how a budget reads. */
import { InvalidArgumentError, type Command } from 'commander';
import type { BudgetObject, BudgetRequest } from '../api';
import { AdminClientError, type AdminClient } from './admin-client';
import { count, time } from './cli-format';
import { clientFor, print, type Common } from './cli-options';

const PERIODS = ['day', 'week', 'month'];

/** `100000/day`, `5000000/week`, `20000000/month`. */
export function budgetArg(value: string): BudgetRequest {
  const m = /^(\d+)\/(day|week|month)$/.exec(value.trim());
  const tokens = m ? Number(m[1]) : NaN;
  if (!m || !Number.isSafeInteger(tokens) || tokens < 1) {
    throw new InvalidArgumentError(`must be tokens per period: <tokens>/<${PERIODS.join('|')}>, such as 100000/day.`);
  }
  return { tokens, period: m[2] as BudgetRequest['period'] };
}

/** Adds --budget. */
export function budgetOption(cmd: Command, whose: string): Command {
  return cmd.option('--budget <tokens/period>', `at most this many charged tokens per UTC day, week or month for ${whose}`, budgetArg);
}

/** `100,000 per day`, or `none`. */
export function budgetText(b: BudgetRequest | null | undefined): string {
  return b ? `${count(b.tokens)} per ${b.period}` : 'none';
}

/** Rows for a show command's table: the budget, and what its period has used. */
export function budgetRows(b: BudgetObject | null): string[][] {
  if (!b) return [['budget', 'none']];
  return [
    ['budget', budgetText(b)],
    ['budget spent', `${count(b.spent)} (+${count(b.reserved)} reserved), resets ${time(b.resets_at)}`],
  ];
}

/** `tokenmeter keys|accounts budget <id> <tokens/period> | --none`: replaces the budget. */
export function budgetCommand(
  group: Command,
  what: 'key' | 'account',
  set: (client: AdminClient, id: string, budget: BudgetRequest | null) => Promise<{ id: string; budget: BudgetObject | null }>,
): void {
  group
    .command('budget')
    .description(
      `change ${what === 'key' ? "a key's" : "an account's"} budget per UTC day, week or month (what the period spent still counts; --none removes it)`,
    )
    .argument('<id>', `the ${what} id`)
    .argument('[tokens/period]', 'such as 100000/day', budgetArg)
    .option('--none', 'remove the budget')
    .action(async (id: string, budget: BudgetRequest | undefined, opts: Common & { none?: boolean }) => {
      if (!budget && !opts.none) throw new AdminClientError('name a budget (such as 100000/day) or --none.');
      const r = await set(clientFor(opts), id, opts.none ? null : (budget ?? null));
      print(opts, r, () => `Budget of ${r.id}: ${budgetText(r.budget)}.`);
    });
}
