/**
 * `tokenmeter ledger status`: how far the ledger archive is behind: records not yet in PostgreSQL, each account's
 * shipped cursor and lag, and the archive's month partitions. Unlike the other commands it reads Redis and PostgreSQL
 * directly (REDIS_URL, REDIS_PREFIX, LEDGER_DATABASE_URL, as the server has them): the shipper's state is not part of
 * the admin API.
 */
import type { Command } from 'commander';
import Redis from 'ioredis';
import { PgLedgerArchive } from '../ledger-archive/ledger-archive';
import { RedisShipSource } from '../store/redis/redis-ship-source';
import { AdminClientError } from './admin-client';

interface LedgerStatus {
  archive: boolean;
  backlog_records: number;
  oldest_unshipped_seconds: number | null;
  accounts: { account_id: string; shipped_cursor: string | null; backlog_records: number }[];
  partitions: { name: string; rows: number }[];
}

export function ledgerCommand(program: Command): void {
  const ledger = program.command('ledger').description('the usage ledger and its PostgreSQL archive (docs/ledger-archive.md)');
  ledger
    .command('status')
    .description('records not yet shipped to PostgreSQL, each account’s cursor and lag, and the archive’s partitions')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const status = await readStatus(process.env);
      process.stdout.write(opts.json ? `${JSON.stringify(status, null, 2)}\n` : describe(status));
    });
}

async function readStatus(env: NodeJS.ProcessEnv): Promise<LedgerStatus> {
  if (!env.REDIS_URL) throw new AdminClientError('ledger status reads Redis: set REDIS_URL (and REDIS_PREFIX) as the server has them.');
  const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  const archive = env.LEDGER_DATABASE_URL ? new PgLedgerArchive(env.LEDGER_DATABASE_URL) : undefined;
  try {
    await redis.connect();
    const source = new RedisShipSource(redis, env.REDIS_PREFIX ?? 'tm:');
    const accounts: LedgerStatus['accounts'] = [];
    let oldest: number | null = null;
    for (const id of await source.accounts()) {
      const [cursor, backlog] = await Promise.all([source.shipped(id), source.backlog(id)]);
      if (backlog.oldestMs !== null && (oldest === null || backlog.oldestMs < oldest)) oldest = backlog.oldestMs;
      accounts.push({ account_id: id, shipped_cursor: cursor === '0-0' ? null : cursor, backlog_records: backlog.records });
    }
    return {
      archive: archive !== undefined,
      backlog_records: accounts.reduce((sum, a) => sum + a.backlog_records, 0),
      oldest_unshipped_seconds: oldest === null ? null : Math.max(0, Math.round((Date.now() - oldest) / 1000)),
      accounts,
      partitions: archive ? await archive.partitions() : [],
    };
  } finally {
    redis.disconnect();
    await archive?.close();
  }
}

function describe(s: LedgerStatus): string {
  const lines = [
    s.archive ? 'Archive: PostgreSQL (LEDGER_DATABASE_URL)' : 'Archive: off (LEDGER_DATABASE_URL unset): Redis keeps the ledger',
    `Not shipped: ${s.backlog_records} records` +
      (s.oldest_unshipped_seconds === null ? '' : `, the oldest ${s.oldest_unshipped_seconds} s old`),
  ];
  for (const a of s.accounts.filter((x) => x.backlog_records > 0 || x.shipped_cursor !== null))
    lines.push(`  ${a.account_id}  shipped up to ${a.shipped_cursor ?? '(nothing)'}, ${a.backlog_records} behind`);
  if (s.archive) lines.push(`Partitions: ${s.partitions.map((p) => `${p.name} (~${p.rows} rows)`).join(', ') || 'none yet'}`);
  return `${lines.join('\n')}\n`;
}
