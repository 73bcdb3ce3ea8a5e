/**
 * `tokenmeter usage export`: the whole ledger (or a time range of it) streamed to stdout as CSV, NDJSON or CloudEvents
 * (the very events usage.settled webhooks carry), account by account, page by page; a progress line on stderr.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { usageCloudEvent, type UsageObject } from '../api';
import type { AdminClient } from './admin-client';
import { clientFor, unixTime, type Common } from './cli-options';

const FORMATS = ['csv', 'ndjson', 'cloudevents'] as const;
type Format = (typeof FORMATS)[number];
const PAGE = 1000;

const CSV_COLUMNS = [
  'created',
  'account_id',
  'key_id',
  'request_id',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'charged_tokens',
  'estimated',
  'stream',
  'status',
] as const;

function format(value: string): Format {
  if (!(FORMATS as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${FORMATS.join(', ')}.`);
  return value as Format;
}

function csvField(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One record as a line of the format. */
export function exportLine(u: UsageObject, f: Format): string {
  if (f === 'csv') return CSV_COLUMNS.map((c) => csvField(u[c])).join(',');
  if (f === 'ndjson') return JSON.stringify(u);
  return usageCloudEvent(u);
}

/** Writes a line, waiting when stdout's buffer is full (an export can be far larger than memory). */
function write(line: string): Promise<void> {
  return new Promise((resolve) => (process.stdout.write(`${line}\n`) ? resolve() : process.stdout.once('drain', resolve)));
}

async function* accounts(client: AdminClient): AsyncGenerator<string> {
  let after: string | undefined;
  for (;;) {
    const page = await client.listAccounts({ limit: 100, after });
    for (const a of page.data) yield a.id;
    if (!page.has_more || page.data.length === 0) return;
    after = page.data[page.data.length - 1].id;
  }
}

export function usageExportCommand(usage: Command): void {
  usage
    .command('export')
    .description('stream the ledger to stdout (every account, oldest first within each); progress on stderr')
    .option('--since <unix>', 'from this Unix time', unixTime)
    .option('--until <unix>', 'up to this Unix time', unixTime)
    .option('--format <format>', FORMATS.join(' | '), format, 'ndjson')
    .action(async (_own: unknown, cmd: Command) => {
      // `usage` defines --since and --until too and takes them when they follow `export`: read them wherever they
      // landed (the program's global options must stay accepted after the subcommand, so options are not positional).
      const opts = cmd.optsWithGlobals<Common & { since?: number; until?: number; format: Format }>();
      const client = clientFor(opts);
      const started = Date.now();
      let records = 0;
      let accountsDone = 0;
      let lastProgress = started;
      const progress = (done: boolean) => {
        const now = Date.now();
        if (!done && now - lastProgress < 1_000) return;
        if (done && now - started < 1_000) return;
        lastProgress = now;
        process.stderr.write(`usage export: ${records} records from ${accountsDone} accounts${done ? ', done' : ''}\n`);
      };
      if (opts.format === 'csv') await write(CSV_COLUMNS.join(','));
      for await (const accountId of accounts(client)) {
        let after = '0-0';
        for (;;) {
          const { data } = await client.usage({ account_id: accountId, since: opts.since, until: opts.until, after, limit: PAGE });
          for (const u of data) await write(exportLine(u, opts.format));
          records += data.length;
          progress(false);
          if (data.length < PAGE) break;
          after = data[data.length - 1].cursor;
        }
        accountsDone += 1;
      }
      progress(true);
    });
}
