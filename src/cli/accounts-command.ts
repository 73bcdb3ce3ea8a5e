/** `tokenmeter accounts …`: create (the first console admin comes from here), list, show, update, disable, grant. */
import type { Command } from 'commander';
import { AdminClientError } from './admin-client';
import { count, table, time } from './cli-format';
import { clientFor, expiry, expiryOptions, positiveInt, print, readPasswordFromStdin, type Common } from './cli-options';
import { packagesTable } from './keys-command';
import { limitOptions, limitRows, limitsCommand, limitsFrom, limitsText, type LimitFlags } from './limits-cli';
import type { AccountObject } from '../api';
import { budgetCommand, budgetOption, budgetRows, budgetText } from './budget-cli';
import type { BudgetRequest } from '../api';

const ROLES = ['member', 'admin'];

function role(value: string | undefined): 'member' | 'admin' | undefined {
  if (value === undefined) return undefined;
  if (!ROLES.includes(value)) throw new AdminClientError(`--role must be one of ${ROLES.join(', ')}.`);
  return value as 'member' | 'admin';
}

/** --password-stdin reads it; --password takes it from argv, with a warning, since argv is visible to other users. */
async function password(opts: { password?: string; passwordStdin?: boolean }): Promise<string | undefined> {
  if (opts.passwordStdin) return readPasswordFromStdin();
  if (opts.password !== undefined) {
    process.stderr.write('tokenmeter: warning: a password on the command line is visible to other users; prefer --password-stdin.\n');
  }
  return opts.password;
}

const accountLine = (a: AccountObject) => `${a.id}${a.email ? ` <${a.email}>` : ''}${a.name ? ` (${a.name})` : ''}`;

export function accountsCommand(program: Command): void {
  const accounts = program.command('accounts').description('create, list, show, update and disable accounts');
  createCommand(accounts);
  listCommand(accounts);
  showCommand(accounts);
  updateCommand(accounts);
  statusCommands(accounts);
  limitsCommand(accounts, 'account', (client, id, limits) => client.updateAccount(id, { limits }));
  budgetCommand(accounts, 'account', (client, id, budget) => client.updateAccount(id, { budget }));
  grantCommand(accounts);
}

/** `accounts create`: an account, with a first package, limits and budget when given. */
function createCommand(accounts: Command): void {
  budgetOption(limitOptions(accounts.command('create')), 'all its keys together')
    .description('create an account (with --role admin and a password: a console administrator)')
    .option('--email <email>', 'the login email (lower-cased; unique)')
    .option('--name <name>', 'a display name')
    .option('--role <role>', 'member or admin', 'member')
    .option('--password-stdin', 'read the password from standard input (at least 10 characters)')
    .option('--password <password>', 'the password (visible to other users: prefer --password-stdin)')
    .option('--tokens <n>', 'grant a first package of this many tokens', positiveInt)
    .action(
      async (
        opts: Common &
          LimitFlags & {
            email?: string;
            name?: string;
            role?: string;
            password?: string;
            passwordStdin?: boolean;
            tokens?: number;
            budget?: BudgetRequest;
          },
      ) => {
        const a = await clientFor(opts).createAccount({
          email: opts.email,
          name: opts.name,
          role: role(opts.role),
          password: await password(opts),
          tokens: opts.tokens,
          limits: limitsFrom(opts),
          budget: opts.budget,
        });
        print(
          opts,
          a,
          () =>
            `Created account ${accountLine(a)}, ${a.role}, with a balance of ${count(a.balance)} tokens` +
            (a.limits ? `, limits: ${limitsText(a.limits)}` : '') +
            (a.budget ? `, budget: ${budgetText(a.budget)}.` : '.'),
        );
      },
    );
}

/** `accounts list`: a page of accounts, oldest first. */
function listCommand(accounts: Command): void {
  accounts
    .command('list')
    .description('list accounts, oldest first')
    .option('--search <text>', 'only accounts whose email or name contains this')
    .option('--after <id>', 'only accounts after this id (the next page)')
    .option('--limit <n>', 'at most this many (1-1000)', positiveInt, 100)
    .action(async (opts: Common & { search?: string; after?: string; limit: number }) => {
      const page = await clientFor(opts).listAccounts({ search: opts.search, after: opts.after, limit: opts.limit });
      print(opts, page, () =>
        page.data.length === 0
          ? 'No accounts.'
          : table(
              ['ID', 'EMAIL', 'NAME', 'ROLE', 'STATUS', 'BALANCE', 'RESERVED', 'DEBT', 'PASSWORD', 'CREATED'],
              page.data.map((a) => [
                a.id,
                a.email ?? '-',
                a.name || '-',
                a.role,
                a.status,
                count(a.balance),
                count(a.reserved),
                count(a.debt),
                a.has_password ? 'yes' : 'no',
                time(a.created),
              ]),
            ) + (page.has_more ? `\n\nMore: --after ${page.data[page.data.length - 1].id}` : ''),
      );
    });
}

/** `accounts show`: one account with its balance, packages, usage and keys. */
function showCommand(accounts: Command): void {
  accounts
    .command('show')
    .description('show an account: balance, packages, usage and keys')
    .argument('<id>', 'the account id')
    .action(async (id: string, opts: Common) => {
      const a = await clientFor(opts).showAccount(id);
      print(opts, a, () =>
        [
          table(
            ['FIELD', 'VALUE'],
            [
              ['id', a.id],
              ['email', a.email ?? '-'],
              ['name', a.name || '-'],
              ['role', a.role],
              ['status', a.status],
              ['password', a.has_password ? 'set' : 'none'],
              ['created', time(a.created)],
              ...limitRows(a.limits, a.limit_use),
              ...budgetRows(a.budget),
              ['balance', count(a.balance)],
              ['reserved', count(a.reserved)],
              ['debt', count(a.debt)],
              ['requests', count(a.usage.requests)],
              ['charged tokens', count(a.usage.charged_tokens)],
            ],
          ),
          '',
          packagesTable(a.packages),
          '',
          a.keys.length === 0
            ? 'No keys.'
            : table(
                ['KEY', 'NAME', 'STATUS', 'SPENT', 'CAP'],
                a.keys.map((k) => [
                  k.id,
                  k.name || '-',
                  k.status,
                  count(k.spent_tokens),
                  k.limit_tokens === null ? '-' : count(k.limit_tokens),
                ]),
              ),
        ].join('\n'),
      );
    });
}

/** `accounts update`: name, role or a new password. */
function updateCommand(accounts: Command): void {
  accounts
    .command('update')
    .description('rename an account, set its role or a new password')
    .argument('<id>', 'the account id')
    .option('--name <name>', 'a new display name')
    .option('--role <role>', 'member or admin')
    .option('--password-stdin', 'read a new password from standard input')
    .option('--password <password>', 'a new password (visible to other users: prefer --password-stdin)')
    .action(async (id: string, opts: Common & { name?: string; role?: string; password?: string; passwordStdin?: boolean }) => {
      const a = await clientFor(opts).updateAccount(id, { name: opts.name, role: role(opts.role), password: await password(opts) });
      print(opts, a, () => `Updated ${accountLine(a)}.`);
    });
}

/** `accounts disable` and `accounts enable`. */
function statusCommands(accounts: Command): void {
  for (const [command, status, effect] of [
    ['disable', 'disabled', 'its keys are refused at once, on every process'],
    ['enable', 'active', 'its keys work again'],
  ] as const) {
    accounts
      .command(command)
      .description(`${command} an account: ${effect}`)
      .argument('<id>', 'the account id')
      .action(async (id: string, opts: Common) => {
        const a = await clientFor(opts).updateAccount(id, { status });
        print(opts, a, () => `${command === 'disable' ? 'Disabled' : 'Enabled'} ${accountLine(a)}: ${effect}.`);
      });
  }
}

/** `accounts grant`: a token package. */
function grantCommand(accounts: Command): void {
  expiryOptions(accounts.command('grant'), 'package')
    .description('grant a token package to an account')
    .argument('<id>', 'the account id')
    .requiredOption('--tokens <n>', 'tokens in the package', positiveInt)
    .action(async (id: string, opts: Common & { tokens: number; expiresAt?: number; expiresIn?: number }) => {
      const p = await clientFor(opts).grantAccountPackage(id, { tokens: opts.tokens, expires_at: expiry(opts) });
      print(
        opts,
        p,
        () => `Granted ${count(p.tokens)} tokens to ${id} as ${p.id} (usable: ${count(p.remaining)}, expires: ${time(p.expires_at)}).`,
      );
    });
}
