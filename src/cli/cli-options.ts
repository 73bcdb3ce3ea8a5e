/** What every `tokenmeter` command shares: --url and --json, argument parsers, the admin client and printing. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { AdminClient, AdminClientError } from './admin-client';
import { durationSeconds } from './cli-format';

export interface Common {
  url: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1.');
  return n;
}

export function unixTime(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('must be a Unix time in seconds.');
  return n;
}

function duration(value: string): number {
  const s = durationSeconds(value);
  if (s === undefined || s <= 0) throw new InvalidArgumentError('must be a duration such as 30d, 12h, 90m or 3600s.');
  return s;
}

/** --expires-at wins; --expires-in counts from now. */
export function expiry(opts: { expiresAt?: number; expiresIn?: number }): number | undefined {
  if (opts.expiresAt !== undefined) return opts.expiresAt;
  return opts.expiresIn !== undefined ? Math.floor(Date.now() / 1000) + opts.expiresIn : undefined;
}

/** Adds --expires-at and --expires-in, for a key's or a package's expiry (see expiry()). */
export function expiryOptions(cmd: Command, what: string): Command {
  return cmd
    .option('--expires-at <unix>', `the ${what} expires at this Unix time`, unixTime)
    .option('--expires-in <duration>', `the ${what} expires after this long (30d, 12h, …)`, duration);
}

/** Adds --url and --json to a command, so they work after the subcommand as people type them. */
export function common(cmd: Command): Command {
  return cmd
    .addOption(new Option('--url <url>', 'the proxy').env('TOKENMETER_URL').default(DEFAULT_URL))
    .option('--json', 'print JSON for scripts');
}

export function clientFor(opts: Common): AdminClient {
  const token = process.env.TOKENMETER_ADMIN_TOKEN;
  if (!token) throw new AdminClientError('set TOKENMETER_ADMIN_TOKEN to the proxy’s ADMIN_TOKEN.');
  return new AdminClient(opts.url, token);
}

export function print(opts: Common, value: unknown, human: () => string): void {
  process.stdout.write(`${opts.json ? JSON.stringify(value, null, 2) : human()}\n`);
}

/** A comma-separated list of model ids, or undefined. */
export function modelList(value: string | undefined): string[] | undefined {
  return value
    ?.split(',')
    .map((m) => m.trim())
    .filter(Boolean);
}

/**
 * A password read from standard input (its first line), so it never appears in the process list or the shell's
 * history as an argument would.
 */
export async function readPasswordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const password = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
  if (!password) throw new AdminClientError('--password-stdin: standard input held no password.');
  return password;
}
