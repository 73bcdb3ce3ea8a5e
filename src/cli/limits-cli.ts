/** The CLI's side of rate and concurrency limits: the --rpm/--tpm/--max-concurrent options, the `limits` commands, how limits read. */
import type { Command } from 'commander';
import type { LimitsObject, LimitUseObject } from '../api';
import { AdminClientError, type AdminClient } from './admin-client';
import { count } from './cli-format';
import { clientFor, positiveInt, print, type Common } from './cli-options';

export interface LimitFlags {
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
  none?: boolean;
}

/** Adds --rpm, --tpm and --max-concurrent (and, for changing limits, --none). */
export function limitOptions(cmd: Command, withNone = false): Command {
  cmd
    .option('--rpm <n>', 'at most this many requests per minute', positiveInt)
    .option('--tpm <n>', 'at most this many tokens per minute (counting each request’s reservation)', positiveInt)
    .option('--max-concurrent <n>', 'at most this many requests in flight', positiveInt);
  return withNone ? cmd.option('--none', 'remove every limit') : cmd;
}

/** The limits the flags name; undefined when they name none. */
export function limitsFrom(flags: LimitFlags): LimitsObject | undefined {
  const out: LimitsObject = {};
  if (flags.rpm !== undefined) out.rpm = flags.rpm;
  if (flags.tpm !== undefined) out.tpm = flags.tpm;
  if (flags.maxConcurrent !== undefined) out.max_concurrent = flags.maxConcurrent;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `60 rpm, 100,000 tpm, 4 in flight`, or `none`. */
export function limitsText(limits: LimitsObject | null | undefined): string {
  if (!limits) return 'none';
  const parts: string[] = [];
  if (limits.rpm !== undefined) parts.push(`${count(limits.rpm)} rpm`);
  if (limits.tpm !== undefined) parts.push(`${count(limits.tpm)} tpm`);
  if (limits.max_concurrent !== undefined) parts.push(`${count(limits.max_concurrent)} in flight`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/** Rows for a show command's table: the limits, and what each holds now. */
export function limitRows(limits: LimitsObject | null, use: LimitUseObject | null): string[][] {
  const rows = [['limits', limitsText(limits)]];
  if (use?.requests) rows.push(['requests left', `${count(use.requests.remaining)} of ${count(use.requests.limit)} this minute`]);
  if (use?.tokens) rows.push(['tokens left', `${count(use.tokens.remaining)} of ${count(use.tokens.limit)} this minute`]);
  if (use?.concurrent) rows.push(['in flight', `${count(use.concurrent.in_flight)} of ${count(use.concurrent.limit)}`]);
  return rows;
}

/** `tokenmeter keys|accounts limits <id> [--rpm n] [--tpm n] [--max-concurrent n] | --none`: replaces the limits. */
export function limitsCommand(
  group: Command,
  what: 'key' | 'account',
  set: (client: AdminClient, id: string, limits: LimitsObject | null) => Promise<{ id: string; limits: LimitsObject | null }>,
): void {
  limitOptions(group.command('limits'), true)
    .description(`change ${what === 'key' ? "a key's" : "an account's"} rate and concurrency limits (replacing them; --none removes them)`)
    .argument('<id>', `the ${what} id`)
    .action(async (id: string, opts: Common & LimitFlags) => {
      const limits = limitsFrom(opts);
      if (!limits && !opts.none) throw new AdminClientError('name a limit (--rpm, --tpm, --max-concurrent) or --none.');
      const r = await set(clientFor(opts), id, opts.none ? null : (limits ?? null));
      print(opts, r, () => `Limits of ${r.id}: ${limitsText(r.limits)}.`);
    });
}
