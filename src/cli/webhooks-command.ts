/** `tokenmeter webhooks`: the endpoints events are delivered to, their deliveries, redelivery; an account's low-balance threshold. */
import type { Command } from 'commander';
import { table, time } from './cli-format';
import { clientFor, positiveInt, print, type Common } from './cli-options';

export function webhooksCommand(program: Command): void {
  const webhooks = program.command('webhooks').description('webhook endpoints and their deliveries');

  webhooks
    .command('create <url>')
    .description('add an endpoint; its signing secret is shown this once')
    .option('--events <types>', 'comma-separated event types, * for all but usage.settled', '*')
    .option('--batch-size <n>', 'up to n usage.settled events per POST, as a CloudEvents batch', positiveInt)
    .action(async (url: string, opts: Common & { events: string; batchSize?: number }) => {
      const events = opts.events
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const e = await clientFor(opts).createWebhook({ url, events, batch_size: opts.batchSize });
      print(opts, e, () => `Endpoint ${e.id} for ${e.events.join(', ')}\nSigning secret (shown once): ${e.secret}`);
    });

  webhooks
    .command('list')
    .description('list endpoints')
    .action(async (opts: Common) => {
      const { data } = await clientFor(opts).listWebhooks();
      print(opts, data, () =>
        data.length === 0
          ? 'No webhook endpoints.'
          : table(
              ['ID', 'URL', 'EVENTS', 'CREATED'],
              data.map((e) => [e.id, e.url, e.events.join(','), time(e.created)]),
            ),
      );
    });

  webhooks
    .command('show <id>')
    .description("an endpoint and its backlog: queued deliveries, the oldest one's age, the last error")
    .action(async (id: string, opts: Common) => {
      const e = await clientFor(opts).webhook(id);
      const last = e.backlog.last_error;
      print(opts, e, () =>
        [
          `Endpoint ${e.id} for ${e.events.join(', ')}${e.batch_size === null ? '' : ` (batches of ${e.batch_size})`}`,
          `url         ${e.url}`,
          `pending     ${e.backlog.pending}`,
          `oldest      ${e.backlog.oldest_age_seconds} s`,
          `last error  ${last ? `${last.error ?? last.status} at ${time(last.at)}` : '-'}`,
        ].join('\n'),
      );
    });

  webhooks
    .command('delete <id>')
    .description('remove an endpoint with its queue')
    .action(async (id: string, opts: Common) => {
      const r = await clientFor(opts).deleteWebhook(id);
      print(opts, r, () => `Deleted ${id}.`);
    });

  webhooks
    .command('deliveries <id>')
    .description("an endpoint's deliveries, newest first, with their attempts")
    .option('--limit <n>', 'at most this many (1-1000)', positiveInt, 50)
    .action(async (id: string, opts: Common & { limit: number }) => {
      const { data } = await clientFor(opts).webhookDeliveries(id, opts.limit);
      print(opts, data, () =>
        data.length === 0
          ? 'No deliveries.'
          : table(
              ['DELIVERY', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST'],
              data.map((d) => {
                const last = d.attempts.at(-1);
                return [d.id, d.event_id, d.type, d.status, String(d.attempts.length), last ? (last.error ?? String(last.status)) : '-'];
              }),
            ),
      );
    });

  webhooks
    .command('redeliver <delivery-id>')
    .description('queue a delivered or failed delivery again')
    .action(async (id: string, opts: Common) => {
      const d = await clientFor(opts).redeliver(id);
      print(opts, d, () => `Queued ${d.id} again (event ${d.event_id}).`);
    });

  webhooks
    .command('low-balance <account-id> <tokens>')
    .description(
      "set an account's balance.low threshold in tokens, or 'default': LOW_BALANCE_TOKENS when set, else LOW_BALANCE_PERCENT (20) percent of its last grant",
    )
    .action(async (accountId: string, tokens: string, opts: Common) => {
      const value = tokens === 'default' ? null : Number(tokens);
      const r = await clientFor(opts).setLowBalance(accountId, value);
      print(opts, r, () => `balance.low for ${accountId} below ${r.low_balance_tokens ?? 'the default'}.`);
    });
}
