/** The CLI's side of rate and concurrency limits: the --rpm/--tpm/--max-concurrent options and how limits read. */
import { InvalidArgumentError, type Command } from 'commander';
import type { LimitUseObject } from '../admin/api-objects';
import type { LimitsInput } from '../limits/limits';
import { count } from './cli-format';

export interface LimitFlags {
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
  none?: boolean;
}

function atLeastOne(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1.');
  return n;
}

/** Adds --rpm, --tpm and --max-concurrent (and, for changing limits, --none). */
export function limitOptions(cmd: Command, withNone = false): Command {
  cmd
    .option('--rpm <n>', 'at most this many requests per minute', atLeastOne)
    .option('--tpm <n>', 'at most this many tokens per minute (counting each request’s reservation)', atLeastOne)
    .option('--max-concurrent <n>', 'at most this many requests in flight', atLeastOne);
  return withNone ? cmd.option('--none', 'remove every limit') : cmd;
}

/** The limits the flags name; undefined when they name none. */
export function limitsFrom(flags: LimitFlags): LimitsInput | undefined {
  const out: LimitsInput = {};
  if (flags.rpm !== undefined) out.rpm = flags.rpm;
  if (flags.tpm !== undefined) out.tpm = flags.tpm;
  if (flags.maxConcurrent !== undefined) out.max_concurrent = flags.maxConcurrent;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `60 rpm, 100,000 tpm, 4 in flight`, or `none`. */
export function limitsText(limits: LimitsInput | null | undefined): string {
  if (!limits) return 'none';
  const parts: string[] = [];
  if (limits.rpm !== undefined) parts.push(`${count(limits.rpm)} rpm`);
  if (limits.tpm !== undefined) parts.push(`${count(limits.tpm)} tpm`);
  if (limits.max_concurrent !== undefined) parts.push(`${count(limits.max_concurrent)} in flight`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/** Rows for a show command's table: what each limit holds now. */
export function limitUseRows(use: LimitUseObject | null): string[][] {
  if (!use) return [];
  const rows: string[][] = [];
  if (use.requests) rows.push(['requests left', `${count(use.requests.remaining)} of ${count(use.requests.limit)} this minute`]);
  if (use.tokens) rows.push(['tokens left', `${count(use.tokens.remaining)} of ${count(use.tokens.limit)} this minute`]);
  if (use.concurrent) rows.push(['in flight', `${count(use.concurrent.in_flight)} of ${count(use.concurrent.limit)}`]);
  return rows;
}
