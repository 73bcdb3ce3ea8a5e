/**
 * Stored responses' owners in PostgreSQL (response_owners, archive-schema.ts): written by the owners shipper
 * idempotently (a day shipped twice is stored once), read for the ids Redis no longer holds, one query per lookup.
 */
import type { Pool, QueryConfig } from 'pg';
import type { OwnerRow } from '../store/ports/owner-ship-source';
import { dropPartitionsBefore, ensurePartition, monthOf } from './archive-schema';

const DAY_S = 24 * 3600;

export interface OwnersArchive {
  /** Stores the rows in one statement; a row already stored is skipped (ON CONFLICT DO NOTHING). */
  store(rows: readonly OwnerRow[]): Promise<void>;
  /** Of each id recorded on `fromDay` or after, its newest row; ids never stored are absent. */
  find(ids: readonly string[], fromDay: number): Promise<Map<string, OwnerRow>>;
  /** Forgets a deleted response. */
  forget(id: string): Promise<void>;
  /** Drops the months wholly before `keepFromDay`'s; their names. */
  dropBefore(keepFromDay: number): Promise<string[]>;
}

const INSERT = `INSERT INTO response_owners (id, day, account_id, model, tokens)
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) ON CONFLICT DO NOTHING`;
// `day >= $2` keeps the lookup to the partitions an owner can still be read from (the last 30 days).
const FIND = `SELECT DISTINCT ON (id) id, day, account_id, model, tokens FROM response_owners
  WHERE id = ANY($1::text[]) AND day >= $2 ORDER BY id, day DESC`;

interface Row {
  id: string;
  day: string;
  account_id: string;
  model: string | null;
  tokens: string | null;
}

export class PgOwnersArchive implements OwnersArchive {
  private readonly months = new Set<string>();

  /**
   * `db`: the ledger archive's pool and schema (PgLedgerArchive). `lookupTimeoutMs`: the most a lookup (on a
   * request's path) waits for PostgreSQL. Default 2 s.
   */
  constructor(
    private readonly db: { pool: Pool; ready(): Promise<number> },
    private readonly lookupTimeoutMs = 2_000,
  ) {}

  async store(rows: readonly OwnerRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.ready();
    for (const r of rows) {
      const month = monthOf(r.day * DAY_S, 'response_owners').name;
      if (this.months.has(month)) continue;
      await ensurePartition(this.db.pool, r.day * DAY_S, 'response_owners');
      this.months.add(month);
    }
    const columns: unknown[][] = [[], [], [], [], []];
    for (const r of rows) [r.id, r.day * DAY_S, r.accountId, r.model, r.tokens].forEach((v, i) => columns[i].push(v));
    await this.db.pool.query(INSERT, columns);
  }

  async find(ids: readonly string[], fromDay: number): Promise<Map<string, OwnerRow>> {
    const found = new Map<string, OwnerRow>();
    if (ids.length === 0) return found;
    await this.db.ready();
    const query: QueryConfig & { query_timeout: number } = {
      text: FIND,
      values: [ids, fromDay * DAY_S],
      query_timeout: this.lookupTimeoutMs,
    };
    const { rows } = await this.db.pool.query<Row>(query);
    for (const r of rows)
      found.set(r.id, {
        id: r.id,
        day: Number(r.day) / DAY_S,
        accountId: r.account_id,
        model: r.model,
        tokens: r.tokens === null ? null : Number(r.tokens),
      });
    return found;
  }

  async forget(id: string): Promise<void> {
    await this.db.ready();
    await this.db.pool.query('DELETE FROM response_owners WHERE id = $1', [id]);
  }

  async dropBefore(keepFromDay: number): Promise<string[]> {
    await this.db.ready();
    const dropped = await dropPartitionsBefore(this.db.pool, keepFromDay * DAY_S, 'response_owners');
    for (const name of dropped) this.months.delete(name);
    return dropped;
  }
}
