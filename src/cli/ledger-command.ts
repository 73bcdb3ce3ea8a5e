/** `tokenmeter ledger status`: how far the ledger archive is behind (GET /admin/ledger). */
import type { Command } from 'commander';
import type { LedgerStatusObject } from '../api';
import { clientFor, print, type Common } from './cli-options';

export function ledgerCommand(program: Command): void {
  const ledger = program.command('ledger').description('the usage ledger and its PostgreSQL archive (docs/ledger-archive.md)');
  ledger
    .command('status')
    .description('records not yet shipped to PostgreSQL, each account’s cursor and lag, and the archive’s partitions')
    .action(async (opts: Common) => {
      const status = await clientFor(opts).ledgerStatus();
      print(opts, status, () => describe(status));
    });
}

function describe(s: LedgerStatusObject): string {
  const lines = [
    s.archive ? 'Archive: PostgreSQL (LEDGER_DATABASE_URL)' : 'Archive: off (LEDGER_DATABASE_URL unset): Redis keeps the ledger',
    `Not shipped: ${s.backlog_records} records` +
      (s.oldest_unshipped_seconds === null ? '' : `, the oldest ${s.oldest_unshipped_seconds} s old`),
  ];
  for (const a of s.accounts)
    lines.push(`  ${a.account_id}  shipped up to ${a.shipped_cursor ?? '(nothing)'}, ${a.backlog_records} behind`);
  if (s.archive && s.partitions === null) lines.push('Partitions: PostgreSQL does not answer');
  else if (s.archive)
    lines.push(
      `Partitions: ${s.partitions!.map((p) => `${p.name} (${p.exact ? '' : '~'}${p.rows} ${p.rows === 1 ? 'row' : 'rows'})`).join(', ') || 'none yet'}`,
    );
  return lines.join('\n');
}
