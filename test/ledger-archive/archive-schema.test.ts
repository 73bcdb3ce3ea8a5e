/**
 * The archive's schema migration against a real PostgreSQL (started by the test): a migration whose connection
 * PostgreSQL cuts (an immediate stop, as the archive's process test does under load) fails as a rejected promise, the
 * process goes on, and the next `ready()` migrates once PostgreSQL is back.
 */
import { Client } from 'pg';
import { PgLedgerArchive } from '../../src/ledger-archive/ledger-archive';
import { eventually } from '../helpers/eventually';
import { startPostgresServer, type PostgresServer } from '../helpers/postgres-server';

/** archive-schema.ts's advisory lock: held here, it keeps a migration waiting with its client out of the pool. */
const LOCK = 7_291_029;

describe('the archive schema migration', () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await startPostgresServer();
  }, 30_000);
  afterAll(async () => {
    await pg.destroy();
  });

  it('survives PostgreSQL stopping mid-migration and migrates once it is back', async () => {
    const holder = new Client({ connectionString: pg.url });
    holder.on('error', () => {}); // the stop cuts this session too
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [LOCK]);
    const archive = new PgLedgerArchive(pg.url);
    try {
      const first = archive.ready();
      first.catch(() => {});
      // The migration's client is out of the pool, waiting for the lock, when PostgreSQL stops.
      await eventually(
        async () => {
          const { rows } = await holder.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT pg_advisory_lock%'",
          );
          expect(rows[0].n).toBe(1);
        },
        10_000,
        'the migration to wait for the advisory lock',
      );
      await pg.stop();
      // Before the fix, the cut connection's 'error' had no listener: the process (here, jest's) died of it.
      await expect(first).rejects.toThrow();
      await pg.start();
      await expect(archive.ready()).resolves.toBe(2);
      expect(await archive.partitions()).toEqual([]);
    } finally {
      await holder.end().catch(() => {});
      await archive.close();
    }
  }, 60_000);
});
