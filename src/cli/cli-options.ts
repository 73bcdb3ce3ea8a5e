/** What every `tokenmeter` command shares: the global options, argument parsers, the admin client and printing. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { AdminClient, AdminClientError } from './admin-client';
import { durationSeconds } from './cli-format';

export interface Common {
  url: string;
  adminToken?: string;
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

/**
 * The options every command takes (--url, --admin-token, --json), on the program so that they are accepted before
 * the subcommand and after it alike; the command that runs finds them among its own (a preAction hook copies them).
 * Call before adding subcommands: they inherit the help setting that lists these options under each of them.
 */
export function globalOptions(program: Command): Command {
  return program
    .addOption(
      new Option('--url <url>', 'the proxy’s address, without /v1 (the admin API is at its root)')
        .env('TOKENMETER_URL')
        .default(DEFAULT_URL),
    )
    .addOption(
      new Option('--admin-token <token>', 'the proxy’s ADMIN_TOKEN (prefer the variable: arguments show in the process list)').env(
        'TOKENMETER_ADMIN_TOKEN',
      ),
    )
    .option('--json', 'print JSON for scripts')
    .configureHelp({ showGlobalOptions: true })
    .hook('preAction', (root, action) => {
      for (const [name, value] of Object.entries(root.opts())) if (value !== undefined) action.setOptionValue(name, value);
    });
}

/** The admin client for --url, once the URL is one the admin API can be at. */
export function clientFor(opts: Common): AdminClient {
  const token = opts.adminToken ?? process.env.TOKENMETER_ADMIN_TOKEN;
  if (!token) throw new AdminClientError('set TOKENMETER_ADMIN_TOKEN (or --admin-token) to the proxy’s ADMIN_TOKEN.');
  return new AdminClient(adminBase(opts.url), token);
}

/** The URL given, checked for the two usual slips: no scheme, and the OpenAI base URL (…/v1) instead of the server's. */
export function adminBase(url: string): string {
  if (!/^https?:\/\//i.test(url)) {
    const hint = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? '' : ` (http://${url})`;
    throw new AdminClientError(`--url ${url}: give the scheme, http:// or https://${hint}.`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AdminClientError(`--url ${url}: not a URL.`);
  }
  const path = parsed.pathname.replace(/\/+$/, '');
  if (/\/v1$/.test(path)) {
    const root = `${parsed.origin}${path.slice(0, -3)}`;
    throw new AdminClientError(`--url ${url}: drop /v1, the admin API is at the server's root: --url ${root}.`);
  }
  return url;
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
