/** `tokenmeter keys …` and `tokenmeter packages grant`: API keys and the packages of their accounts. */
import type { Command } from 'commander';
import type { PackageObject } from '../api';
import { AdminClientError, type AdminClient } from './admin-client';
import { count, table, time } from './cli-format';
import { clientFor, expiry, expiryOptions, modelList, positiveInt, print, type Common } from './cli-options';
import { limitOptions, limitRows, limitsCommand, limitsFrom, limitsText, type LimitFlags } from './limits-cli';
import { budgetCommand, budgetOption, budgetRows, budgetText } from './budget-cli';
import type { BudgetRequest } from '../api';

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description('create, list, show and revoke API keys');
  createCommand(keys);
  listCommand(keys);
  showCommand(keys);
  limitsCommand(keys, 'key', (client, id, limits) => client.setKeyLimits(id, limits));
  budgetCommand(keys, 'key', (client, id, budget) => client.setKeyBudget(id, budget));
  revokeCommand(keys);
  packagesCommand(program);
}

/** `keys create`: a key (in a new account unless one is named); its secret printed once. */
function createCommand(keys: Command): void {
  budgetOption(limitOptions(expiryOptions(keys.command('create'), 'key')), 'the key')
    .description('create a key (in a new account of its own, unless --account names one); its secret is shown once')
    .option('--name <name>', 'a label for the key')
    .option('--account <id>', 'the account whose balance the key spends')
    .option('--tokens <n>', "grant a first package of this many tokens to the key's account", positiveInt)
    .option('--limit-tokens <n>', 'the most this key may ever be charged (its cap)', positiveInt)
    .option('--models <ids>', 'comma-separated model ids the key may use (default: all)')
    .action(
      async (
        opts: Common &
          LimitFlags & {
            name?: string;
            account?: string;
            tokens?: number;
            limitTokens?: number;
            expiresAt?: number;
            expiresIn?: number;
            models?: string;
            budget?: BudgetRequest;
          },
      ) => {
        const created = await clientFor(opts).createKey({
          name: opts.name,
          account_id: opts.account,
          tokens: opts.tokens,
          limit_tokens: opts.limitTokens,
          expires_at: expiry(opts),
          models: modelList(opts.models),
          limits: limitsFrom(opts),
          budget: opts.budget,
        });
        print(opts, created, () =>
          [
            `Created key ${created.id}${created.name ? ` (${created.name})` : ''} with a balance of ${count(created.balance)} tokens` +
              (created.limits ? `, limits: ${limitsText(created.limits)}` : '') +
              (created.budget ? `, budget: ${budgetText(created.budget)}.` : '.'),
            `Secret, shown only now; store it safely:`,
            ``,
            `  ${created.key}`,
          ].join('\n'),
        );
      },
    );
}

/** `keys list`: every key, or one account's. */
function listCommand(keys: Command): void {
  keys
    .command('list')
    .description('list keys')
    .option('--account <id>', "only this account's keys")
    .action(async (opts: Common & { account?: string }) => {
      const client = clientFor(opts);
      const { data } = opts.account ? await client.accountKeys(opts.account) : await client.listKeys();
      print(opts, data, () =>
        data.length === 0
          ? 'No keys yet: create one with `tokenmeter keys create --tokens 10000`.'
          : table(
              ['ID', 'ACCOUNT', 'NAME', 'PREFIX', 'CREATED', 'EXPIRES', 'LAST USED', 'SPENT', 'CAP', 'STATUS', 'MODELS'],
              data.map((k) => [
                k.id,
                k.account_id,
                k.name || '-',
                k.prefix,
                time(k.created),
                time(k.expires_at),
                time(k.last_used),
                count(k.spent_tokens),
                k.limit_tokens === null ? '-' : count(k.limit_tokens),
                k.status,
                k.models?.join(',') ?? 'all',
              ]),
            ),
      );
    });
}

/** `keys show`: one key with the balance its account offers it, the packages and its usage. */
function showCommand(keys: Command): void {
  keys
    .command('show')
    .description("show a key: the balance its account offers it, the account's packages, the key's usage")
    .argument('<id>', 'the key id (key_…), or the start of its secret (sk-…, at least its shown prefix)')
    .action(async (idOrSecret: string, opts: Common) => {
      const client = clientFor(opts);
      const k = await client.showKey(await keyIdOf(client, idOrSecret));
      print(opts, k, () =>
        [
          table(
            ['FIELD', 'VALUE'],
            [
              ['id', k.id],
              ['account', k.account_id],
              ['name', k.name || '-'],
              ['prefix', k.prefix],
              ['status', k.status],
              ['created', time(k.created)],
              ['expires', time(k.expires_at)],
              ['revoked', time(k.revoked_at)],
              ['last used', time(k.last_used)],
              ['models', k.models?.join(',') ?? 'all'],
              ['cap', k.limit_tokens === null ? '-' : count(k.limit_tokens)],
              ['spent', count(k.spent_tokens)],
              ...limitRows(k.limits, k.limit_use),
              ...budgetRows(k.budget),
              ['balance', count(k.balance)],
              ['reserved', count(k.reserved)],
              ['debt', count(k.debt)],
              ['requests', count(k.usage.requests)],
              ['prompt tokens', count(k.usage.prompt_tokens)],
              ['of which cached', count(k.usage.cached_tokens)],
              ['completion tokens', count(k.usage.completion_tokens)],
              ['of which reasoning', count(k.usage.reasoning_tokens)],
              ['charged tokens', count(k.usage.charged_tokens)],
            ],
          ),
          '',
          packagesTable(k.packages),
        ].join('\n'),
      );
    });
}

/** `keys revoke`. */
function revokeCommand(keys: Command): void {
  keys
    .command('revoke')
    .description('revoke a key; its next request is refused')
    .argument('<id>', 'the key id')
    .action(async (id: string, opts: Common) => {
      const r = await clientFor(opts).revokeKey(id);
      print(opts, r, () => `Revoked ${r.id} at ${time(r.revoked_at)}.`);
    });
}

/** `packages grant`: a token package for a key's account. */
function packagesCommand(program: Command): void {
  const packages = program.command('packages').description('grant token packages');
  expiryOptions(packages.command('grant'), 'package')
    .description("grant a token package to a key's account")
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
}

export function packagesTable(packages: PackageObject[]): string {
  return packages.length === 0
    ? 'No packages.'
    : table(
        ['PACKAGE', 'TOKENS', 'REMAINING', 'EXPIRES', 'CREATED'],
        packages.map((p) => [p.id, count(p.tokens), count(p.remaining), time(p.expires_at), time(p.created)]),
      );
}

/**
 * The key id for `keys show`'s argument: an id as it is; the start of a secret (what an operator has at hand) matched
 * here against the keys' shown prefixes, so the secret itself never goes to the server.
 */
async function keyIdOf(client: AdminClient, arg: string): Promise<string> {
  if (arg.startsWith('key_')) return arg;
  if (!arg.startsWith('sk-'))
    throw new AdminClientError(`keys show takes a key id (key_…) or the start of a key's secret (sk-…), not ${arg}.`);
  const { data } = await client.listKeys();
  const matches = data.filter((k) => arg.startsWith(k.prefix));
  if (matches.length === 1) return matches[0].id;
  if (matches.length === 0)
    throw new AdminClientError(`no key's secret starts with ${arg.slice(0, 12)}…: give at least its shown prefix, or the key id (key_…).`);
  throw new AdminClientError(
    `${matches.length} keys share the prefix ${matches[0].prefix}: give the key id (key_…): ${matches.map((k) => k.id).join(', ')}.`,
  );
}
