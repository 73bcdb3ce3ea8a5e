/** `tokenmeter usage`: the ledger, by account, key, model and time. */
import type { Command } from 'commander';
import { count, table, time } from './cli-format';
import { usageExportCommand } from './usage-export';
import { clientFor, positiveInt, print, unixTime, type Common } from './cli-options';

export function usageCommand(program: Command): void {
  const usage = program.command('usage');
  usageExportCommand(usage);
  usage
    .description('list usage records, newest last')
    .option('--account-id <id>', 'only this account')
    .option('--key-id <id>', 'only this key')
    .option('--model <id>', 'only this model')
    .option('--since <unix>', 'from this Unix time', unixTime)
    .option('--until <unix>', 'up to this Unix time', unixTime)
    .option('--after <cursor>', 'only records after this cursor (with --account-id or --key-id)')
    .option('--limit <n>', 'at most this many (1-1000)', positiveInt, 100)
    .action(
      async (
        opts: Common & {
          accountId?: string;
          keyId?: string;
          model?: string;
          since?: number;
          until?: number;
          after?: string;
          limit: number;
        },
      ) => {
        const { data } = await clientFor(opts).usage({
          account_id: opts.accountId,
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
                [
                  'CREATED',
                  'ACCOUNT',
                  'KEY',
                  'MODEL',
                  'ENDPOINT',
                  'PROMPT',
                  'COMPLETION',
                  'CHARGED',
                  'ESTIMATED',
                  'STREAM',
                  'STATUS',
                  'REQUEST',
                ],
                data.map((u) => [
                  time(u.created),
                  u.account_id,
                  u.key_id ?? '-',
                  u.model,
                  u.endpoint,
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
      },
    );
}
