/**
 * The archive's PostgreSQL schema, created and migrated at start: numbered steps applied in order under an advisory
 * lock (so processes starting together apply each once), the version kept in tokenmeter_ledger_schema. Records live
 * in usage_records, partitioned by month of `created`, and stored responses' owners in response_owners, by month of
 * their day: retention drops whole partitions, never DELETEs.
 */
import type { Pool, PoolClient } from 'pg';

/** Each step runs once, in one transaction; never edit a released step, add one. */
const STEPS: string[] = [
  // 1: the records. PostgreSQL wants the partition key in every unique constraint: a record's `created` never
  // changes, so (account_id, request_id, created) is unique exactly when the request id is, per account.
  `CREATE TABLE usage_records (
     account_id text NOT NULL,
     request_id text NOT NULL,
     cursor_ms bigint NOT NULL,
     cursor_seq bigint NOT NULL,
     key_id text,
     model text NOT NULL,
     endpoint text NOT NULL,
     prompt_tokens bigint NOT NULL,
     completion_tokens bigint NOT NULL,
     cached_tokens bigint NOT NULL,
     reasoning_tokens bigint NOT NULL,
     charged_tokens bigint NOT NULL,
     estimated boolean NOT NULL,
     stream boolean NOT NULL,
     status integer NOT NULL,
     created bigint NOT NULL,
     PRIMARY KEY (account_id, request_id, created)
   ) PARTITION BY RANGE (created);
   CREATE INDEX usage_records_cursor ON usage_records (account_id, cursor_ms, cursor_seq);`,
  // 2: stored responses' owners (owners-archive.ts), one row per id and UTC day recorded (`day`: its start, unix
  // seconds); `model` null for an item's id. An id recorded again on another day is a row more: the newest day wins.
  `CREATE TABLE response_owners (
     id text NOT NULL,
     day bigint NOT NULL,
     account_id text NOT NULL,
     model text,
     tokens bigint,
     PRIMARY KEY (id, day)
   ) PARTITION BY RANGE (day);`,
];

/** The partitioned tables: each partition is `<table>_YYYYMM`. */
export type ArchiveTable = 'usage_records' | 'response_owners';

const LOCK = 7_291_029; // the advisory lock's id: any constant of our own

/** Applies the steps this database lacks; returns its version. */
export async function migrate(pool: Pool): Promise<number> {
  const client = await pool.connect();
  // A client taken out of the pool has no 'error' listener: PostgreSQL going away mid-migration (a restart) emits one,
  // which unheard ends the process. The query under way fails with it anyway; this only keeps the process alive.
  const ignore = () => {};
  client.on('error', ignore);
  let version = 0;
  let failure: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS tokenmeter_ledger_schema (version integer NOT NULL)');
    const { rows } = await client.query<{ version: number }>('SELECT version FROM tokenmeter_ledger_schema');
    version = rows[0]?.version ?? 0;
    if (rows.length === 0) await client.query('INSERT INTO tokenmeter_ledger_schema VALUES (0)');
    for (; version < STEPS.length; version++) await step(client, STEPS[version], version + 1);
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK]);
  } catch (err) {
    failure = err as Error;
  }
  // A connection that failed is dropped, never queried again (it may be dead): its session ends, and the lock with it.
  // The pool puts its own listener back on release, so ours comes off after.
  client.release(failure);
  client.off('error', ignore);
  if (failure) throw failure;
  return version;
}

async function step(client: PoolClient, sql: string, version: number): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(sql);
    await client.query('UPDATE tokenmeter_ledger_schema SET version = $1', [version]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

/** The month partition's name and bounds (unix seconds) holding `created`. */
export function monthOf(created: number, table: ArchiveTable = 'usage_records'): { name: string; from: number; to: number } {
  const d = new Date(created * 1000);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return {
    name: `${table}_${y}${String(m + 1).padStart(2, '0')}`,
    from: Date.UTC(y, m, 1) / 1000,
    to: Date.UTC(y, m + 1, 1) / 1000,
  };
}

/** Creates the month's partition when missing (names and bounds are ours, never input). */
export async function ensurePartition(pool: Pool, created: number, table: ArchiveTable = 'usage_records'): Promise<void> {
  const p = monthOf(created, table);
  await pool
    .query(`CREATE TABLE IF NOT EXISTS ${p.name} PARTITION OF ${table} FOR VALUES FROM (${p.from}) TO (${p.to})`)
    .catch((err: { code?: string }) => {
      // Two processes creating the same partition at once: the loser's error is the winner's table.
      if (err.code !== '42P07' && err.code !== '23505') throw err;
    });
}

/** A partition this small (8 KB pages) is counted exactly: its estimate says ~0 until the first ANALYZE. */
const EXACT_COUNT_MAX_PAGES = 1_000;

/** The partitions, oldest first, with their rows: counted on small ones (`exact`), PostgreSQL's estimate on large ones. */
export async function partitions(
  pool: Pool,
  table: ArchiveTable = 'usage_records',
): Promise<{ name: string; rows: number; exact: boolean }[]> {
  const { rows } = await pool.query<{ name: string; rows: string; pages: string }>(
    `SELECT c.relname AS name, c.reltuples::bigint AS rows, pg_relation_size(c.oid) / 8192 AS pages FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = $1 ORDER BY c.relname`,
    [table],
  );
  const out = [];
  for (const r of rows) {
    if (Number(r.pages) > EXACT_COUNT_MAX_PAGES) out.push({ name: r.name, rows: Math.max(0, Number(r.rows)), exact: false });
    else {
      const counted = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${r.name.replace(/"/g, '""')}"`);
      out.push({ name: r.name, rows: Number(counted.rows[0].n), exact: true });
    }
  }
  return out;
}

/** Drops the partitions of months wholly before `keepFrom`'s month (retention); their names. */
export async function dropPartitionsBefore(pool: Pool, keepFrom: number, table: ArchiveTable = 'usage_records'): Promise<string[]> {
  const keep = monthOf(keepFrom, table).name;
  const dropped: string[] = [];
  for (const p of await partitions(pool, table)) {
    if (p.name >= keep) continue;
    await pool.query(`DROP TABLE IF EXISTS ${p.name}`);
    dropped.push(p.name);
  }
  return dropped;
}
