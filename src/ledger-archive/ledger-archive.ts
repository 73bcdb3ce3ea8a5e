/**
 * The ledger archive port (the shipper writes, the ledger readers read) and its PostgreSQL implementation:
 * usage_records, one row per ledger record, written idempotently (a record shipped twice is stored once).
 */
import { Pool } from 'pg';
import type { UsageQuery, UsageRecord } from '../store/records/metering';
import { dropPartitionsBefore, ensurePartition, migrate, monthOf, partitions } from './archive-schema';

export interface LedgerArchive {
  /** Stores the records in one transaction; a record already stored is skipped (ON CONFLICT DO NOTHING). */
  store(records: readonly UsageRecord[]): Promise<void>;
  /**
   * One account's records matching the query (its `after`/`before`, filters and limit, oldest first) among those at or
   * before `upTo`, the account's shipped cursor.
   */
  read(accountId: string, q: UsageQuery, upTo: string): Promise<UsageRecord[]>;
  partitions(): Promise<{ name: string; rows: number; exact: boolean }[]>;
  /** Drops the months wholly before `keepFrom` (unix seconds). */
  dropBefore(keepFrom: number): Promise<string[]>;
  close(): Promise<void>;
}

const COLUMNS = [
  ['account_id', 'text'],
  ['request_id', 'text'],
  ['cursor_ms', 'bigint'],
  ['cursor_seq', 'bigint'],
  ['key_id', 'text'],
  ['model', 'text'],
  ['endpoint', 'text'],
  ['prompt_tokens', 'bigint'],
  ['completion_tokens', 'bigint'],
  ['cached_tokens', 'bigint'],
  ['reasoning_tokens', 'bigint'],
  ['charged_tokens', 'bigint'],
  ['estimated', 'boolean'],
  ['stream', 'boolean'],
  ['status', 'integer'],
  ['created', 'bigint'],
] as const;

const INSERT = `INSERT INTO usage_records (${COLUMNS.map(([c]) => c).join(', ')})
  SELECT * FROM unnest(${COLUMNS.map(([, t], i) => `$${i + 1}::${t}[]`).join(', ')}) ON CONFLICT DO NOTHING`;

interface Row {
  account_id: string;
  request_id: string;
  cursor_ms: string;
  cursor_seq: string;
  key_id: string | null;
  model: string;
  endpoint: string;
  prompt_tokens: string;
  completion_tokens: string;
  cached_tokens: string;
  reasoning_tokens: string;
  charged_tokens: string;
  estimated: boolean;
  stream: boolean;
  status: number;
  created: string;
}

export class PgLedgerArchive implements LedgerArchive {
  private readonly months = new Set<string>();
  /** Shared with the owners' archive (owners-archive.ts): one pool per process. */
  readonly pool: Pool;
  private migrated: Promise<number> | undefined;

  /** Connects lazily: PostgreSQL down at start delays shipping, never the requests. */
  constructor(url: string) {
    // No query waits long on a connection PostgreSQL dropped: the shipper must come back when it does. A batch of
    // 1,000 rows takes well under a second; 15 s (60 s before) bounds a query lost to a restart, and keep-alive lets
    // the kernel notice a peer that went away without a word.
    this.pool = new Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000, query_timeout: 15_000, keepAlive: true });
    // An idle client's error (the server restarted) is the pool's to replace, not the process's to die of.
    this.pool.on('error', () => {});
  }

  /** Connects and migrates the schema now (tests, the CLI). */
  static async open(url: string): Promise<PgLedgerArchive> {
    const archive = new PgLedgerArchive(url);
    await archive.ready();
    return archive;
  }

  /** The schema created and migrated, once per process (tried again after a failure); its version. */
  ready(): Promise<number> {
    this.migrated ??= migrate(this.pool).catch((err: unknown) => {
      this.migrated = undefined;
      throw err;
    });
    return this.migrated;
  }

  async store(records: readonly UsageRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.ready();
    for (const r of records) {
      const month = monthOf(r.created).name;
      if (this.months.has(month)) continue;
      await ensurePartition(this.pool, r.created);
      this.months.add(month);
    }
    const columns: unknown[][] = COLUMNS.map(() => []);
    for (const r of records) {
      const [ms, seq] = r.cursor.split('-');
      const values = [
        r.accountId,
        r.requestId,
        ms,
        seq,
        r.keyId,
        r.model,
        r.endpoint,
        r.promptTokens,
        r.completionTokens,
        r.cachedTokens,
        r.reasoningTokens,
        r.chargedTokens,
        r.estimated,
        r.stream,
        r.status,
        r.created,
      ];
      values.forEach((v, i) => columns[i].push(v));
    }
    await this.pool.query(INSERT, columns);
  }

  async read(accountId: string, q: UsageQuery, upTo: string): Promise<UsageRecord[]> {
    await this.ready();
    const where = ['account_id = $1', '(cursor_ms, cursor_seq) <= ($2, $3)'];
    const args: unknown[] = [accountId, ...upTo.split('-')];
    const add = (sql: string, ...values: unknown[]) => {
      where.push(sql.replace(/\?/g, () => `$${args.push(values.shift())}`));
    };
    if (q.keyId !== undefined) add('key_id = ?', q.keyId);
    if (q.model !== undefined) add('model = ?', q.model);
    if (q.since !== undefined) add('created >= ?', q.since);
    if (q.until !== undefined) add('created <= ?', q.until);
    if (q.after !== undefined) add('(cursor_ms, cursor_seq) > (?, ?)', ...q.after.split('-'));
    if (q.before !== undefined) add('(cursor_ms, cursor_seq) < (?, ?)', ...q.before.split('-'));
    // After a cursor: the oldest `limit`; else the newest `limit`. Oldest first either way.
    const order = q.after !== undefined ? 'ASC' : 'DESC';
    args.push(q.limit);
    const { rows } = await this.pool.query<Row>(
      `SELECT * FROM usage_records WHERE ${where.join(' AND ')}
        ORDER BY cursor_ms ${order}, cursor_seq ${order} LIMIT $${args.length}`,
      args,
    );
    const records = rows.map(recordOf);
    return q.after !== undefined ? records : records.reverse();
  }

  async partitions(): Promise<{ name: string; rows: number; exact: boolean }[]> {
    await this.ready();
    return partitions(this.pool);
  }

  async dropBefore(keepFrom: number): Promise<string[]> {
    await this.ready();
    const dropped = await dropPartitionsBefore(this.pool, keepFrom);
    for (const name of dropped) this.months.delete(name);
    return dropped;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

function recordOf(r: Row): UsageRecord {
  return {
    requestId: r.request_id,
    accountId: r.account_id,
    keyId: r.key_id,
    model: r.model,
    endpoint: r.endpoint,
    promptTokens: Number(r.prompt_tokens),
    completionTokens: Number(r.completion_tokens),
    cachedTokens: Number(r.cached_tokens),
    reasoningTokens: Number(r.reasoning_tokens),
    chargedTokens: Number(r.charged_tokens),
    estimated: r.estimated,
    stream: r.stream,
    status: r.status,
    created: Number(r.created),
    cursor: `${r.cursor_ms}-${r.cursor_seq}`,
  };
}
