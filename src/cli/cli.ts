#!/usr/bin/env node
/** The `tokenmeter` command: manage keys, packages and usage through a running proxy's admin API. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { AdminClient, AdminClientError } from './admin-client';
import { count, durationSeconds, table, time } from './cli-format';
import { limitOptions, limitsFrom, limitsText, limitUseRows, type LimitFlags } from './limits-cli';

interface Common {
  url: string;
  json?: boolean;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1.');
  return n;
}

function unixTime(value: string): number {
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
function expiry(opts: { expiresAt?: number; expiresIn?: number }): number | undefined {
  if (opts.expiresAt !== undefined) return opts.expiresAt;
  return opts.expiresIn !== undefined ? Math.floor(Date.now() / 1000) + opts.expiresIn : undefined;
}

/** Adds --expires-at and --expires-in, for a key's or a package's expiry (see expiry()). */
function expiryOptions(cmd: Command, what: string): Command {
  return cmd
    .option('--expires-at <unix>', `the ${what} expires at this Unix time`, unixTime)
    .option('--expires-in <duration>', `the ${what} expires after this long (30d, 12h, …)`, duration);
}

/** Adds --url and --json to a command, so they work after the subcommand as people type them. */
function common(cmd: Command): Command {
  return cmd
    .addOption(new Option('--url <url>', 'the proxy').env('TOKENMETER_URL').default(DEFAULT_URL))
    .option('--json', 'print JSON for scripts');
}

function clientFor(opts: Common): AdminClient {
  const token = process.env.TOKENMETER_ADMIN_TOKEN;
  if (!token) throw new AdminClientError('set TOKENMETER_ADMIN_TOKEN to the proxy’s ADMIN_TOKEN.');
  return new AdminClient(opts.url, token);
}

function print(opts: Common, value: unknown, human: () => string): void {
  process.stdout.write(`${opts.json ? JSON.stringify(value, null, 2) : human()}\n`);
}

export function buildCli(): Command {
  const program = new Command('tokenmeter')
    .description(
      'Manage tokenmeter keys, token packages and usage through the admin API.\nThe admin token comes from TOKENMETER_ADMIN_TOKEN.',
    )
    .showHelpAfterError();

  const keys = program.command('keys').description('create, list, show and revoke API keys');

  limitOptions(expiryOptions(common(keys.command('create')), 'key'))
    .description('create a key; its secret is shown once')
    .option('--name <name>', 'a label for the key')
    .option('--tokens <n>', 'grant a first package of this many tokens', positiveInt)
    .option('--models <ids>', 'comma-separated model ids the key may use (default: all)')
    .action(
      async (opts: Common & LimitFlags & { name?: string; tokens?: number; expiresAt?: number; expiresIn?: number; models?: string }) => {
        const created = await clientFor(opts).createKey({
          name: opts.name,
          tokens: opts.tokens,
          expires_at: expiry(opts),
          models: opts.models
            ?.split(',')
            .map((m) => m.trim())
            .filter(Boolean),
          limits: limitsFrom(opts),
        });
        print(opts, created, () =>
          [
            `Created key ${created.id}${created.name ? ` (${created.name})` : ''} with a balance of ${count(created.balance)} tokens` +
              (created.limits ? `, limits: ${limitsText(created.limits)}.` : '.'),
            `Secret, shown only now; store it safely:`,
            ``,
            `  ${created.key}`,
          ].join('\n'),
        );
      },
    );

  common(keys.command('list'))
    .description('list keys')
    .action(async (opts: Common) => {
      const { data } = await clientFor(opts).listKeys();
      print(opts, data, () =>
        data.length === 0
          ? 'No keys yet: create one with `tokenmeter keys create --tokens 10000`.'
          : table(
              ['ID', 'NAME', 'PREFIX', 'CREATED', 'EXPIRES', 'REVOKED', 'MODELS'],
              data.map((k) => [
                k.id,
                k.name || '-',
                k.prefix,
                time(k.created),
                time(k.expires_at),
                time(k.revoked_at),
                k.models?.join(',') ?? 'all',
              ]),
            ),
      );
    });

  common(keys.command('show'))
    .description('show a key: balance, packages and usage')
    .argument('<id>', 'the key id')
    .action(async (id: string, opts: Common) => {
      const k = await clientFor(opts).showKey(id);
      print(opts, k, () =>
        [
          table(
            ['FIELD', 'VALUE'],
            [
              ['id', k.id],
              ['name', k.name || '-'],
              ['prefix', k.prefix],
              ['created', time(k.created)],
              ['expires', time(k.expires_at)],
              ['revoked', time(k.revoked_at)],
              ['models', k.models?.join(',') ?? 'all'],
              ['limits', limitsText(k.limits)],
              ...limitUseRows(k.limit_use),
              ['balance', count(k.balance)],
              ['reserved', count(k.reserved)],
              ['debt', count(k.debt)],
              ['requests', count(k.usage.requests)],
              ['prompt tokens', count(k.usage.prompt_tokens)],
              ['completion tokens', count(k.usage.completion_tokens)],
              ['charged tokens', count(k.usage.charged_tokens)],
            ],
          ),
          '',
          k.packages.length === 0
            ? 'No packages.'
            : table(
                ['PACKAGE', 'TOKENS', 'REMAINING', 'EXPIRES', 'CREATED'],
                k.packages.map((p) => [p.id, count(p.tokens), count(p.remaining), time(p.expires_at), time(p.created)]),
              ),
        ].join('\n'),
      );
    });

  limitOptions(common(keys.command('limits')), true)
    .description("change a key's rate and concurrency limits (replacing them; --none removes them)")
    .argument('<id>', 'the key id')
    .action(async (id: string, opts: Common & LimitFlags) => {
      const limits = limitsFrom(opts);
      if (!limits && !opts.none) throw new AdminClientError('name a limit (--rpm, --tpm, --max-concurrent) or --none.');
      const k = await clientFor(opts).setKeyLimits(id, opts.none ? null : (limits ?? null));
      print(opts, k, () => `Limits of ${k.id}: ${limitsText(k.limits)}.`);
    });

  common(keys.command('revoke'))
    .description('revoke a key; its next request is refused')
    .argument('<id>', 'the key id')
    .action(async (id: string, opts: Common) => {
      const r = await clientFor(opts).revokeKey(id);
      print(opts, r, () => `Revoked ${r.id} at ${time(r.revoked_at)}.`);
    });

  const packages = program.command('packages').description('grant token packages');
  expiryOptions(common(packages.command('grant')), 'package')
    .description('grant a token package to a key')
    .argument('<key-id>', 'the key id')
    .requiredOption('--tokens <n>', 'tokens in the package', positiveInt)
    .action(async (keyId: string, opts: Common & { tokens: number; expiresAt?: number; expiresIn?: number }) => {
      const p = await clientFor(opts).grantPackage(keyId, { tokens: opts.tokens, expires_at: expiry(opts) });
      print(
        opts,
        p,
        () => `Granted ${count(p.tokens)} tokens to ${keyId} as ${p.id} (usable: ${count(p.remaining)}, expires: ${time(p.expires_at)}).`,
      );
    });

  common(program.command('usage'))
    .description('list usage records, newest last')
    .option('--key-id <id>', 'only this key')
    .option('--model <id>', 'only this model')
    .option('--since <unix>', 'from this Unix time', unixTime)
    .option('--until <unix>', 'up to this Unix time', unixTime)
    .option('--after <cursor>', 'only records after this cursor (with --key-id)')
    .option('--limit <n>', 'at most this many (1-1000)', positiveInt, 100)
    .action(async (opts: Common & { keyId?: string; model?: string; since?: number; until?: number; after?: string; limit: number }) => {
      const { data } = await clientFor(opts).usage({
        key_id: opts.keyId,
        model: opts.model,
        since: opts.since,
        until: opts.until,
        after: opts.after,
        limit: opts.limit,
      });
      print(opts, data, () =>
        data.length === 0
          ? 'No usage recorded.'
          : table(
              ['CREATED', 'KEY', 'MODEL', 'PROMPT', 'COMPLETION', 'CHARGED', 'ESTIMATED', 'STREAM', 'STATUS', 'REQUEST'],
              data.map((u) => [
                time(u.created),
                u.key_id ?? '-',
                u.model,
                count(u.prompt_tokens),
                count(u.completion_tokens),
                count(u.charged_tokens),
                u.estimated ? 'yes' : 'no',
                u.stream ? 'yes' : 'no',
                u.status,
                u.request_id,
              ]),
            ),
      );
    });

  const models = program.command('models').description('the models file');
  common(models.command('reload'))
    .description('reload the models file on the proxy (a bad file is refused and the old catalog stays)')
    .action(async (opts: Common) => {
      const r = await clientFor(opts).reloadModels();
      print(opts, r, () => `Reloaded: ${r.models} models.`);
    });

  return program;
}

if (require.main === module) {
  buildCli()
    .parseAsync(process.argv)
    .catch((err: Error) => {
      process.stderr.write(`tokenmeter: ${err instanceof AdminClientError ? err.message : `unexpected error: ${err.message}`}\n`);
      process.exit(1);
    });
}
