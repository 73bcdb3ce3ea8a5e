/**
 * The rollup follower: the daily rollups ({A}:d:<day>) are derived from the ledger after settlement, not in its step.
 * Each pass (every second) reads the records after each account's rollup cursor that this process settled for, sums
 * them per UTC day and model or key, and applies the sums and the cursor's move in one script (lua/rollups/apply.lua)
 * that refuses a batch read after a cursor that has moved since: every record is rolled up exactly once, whichever
 * process applies it, and one killed before the step leaves its records to the next pass. The first pass, and every
 * SWEEP-th, visits every account, so records a crashed process settled are rolled up by the others. The passes run
 * from the store's construction (the timer does not hold a process open) until it closes.
 */
import { ROLLUP_DAYS } from '../records/rollups';
import { cursorMs } from '../ids';
import { defineScripts } from './define-scripts';
import { luaScript } from './lua-scripts';
import { parseUsageEntry } from './redis-records';
import type { RedisShared } from './redis-shared';

/** Every this many passes, every account is visited. */
const SWEEP = 60;
/** Records read and applied at once. */
const BATCH = 1000;

type Sums = [number, number, number, number, number, number];

export class RollupFollower {
  private readonly scripts;
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private passes = 0;
  private stopped = false;

  constructor(
    private readonly shared: RedisShared,
    private readonly intervalMs = 1000,
    /** A pass that failed (its accounts are visited again on the next). */
    private readonly failed: (err: Error) => void = () => {},
  ) {
    this.scripts = defineScripts(shared.redis, { tmRollupApply: luaScript('rollups/apply.lua') });
    this.schedule();
  }

  /** An account this process settled for: visited on the next pass. */
  settled(accountId: string): void {
    this.dirty.add(accountId);
  }

  /** Stops after the pass under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.pass()
        .catch(this.failed)
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Rolls up what is new for the accounts settled since the last pass (every account, on a sweep). */
  async pass(): Promise<void> {
    const sweep = this.passes++ % SWEEP === 0;
    const ids = sweep ? await this.shared.redis.zrange(this.shared.keys.global('accounts'), 0, -1) : [...this.dirty];
    this.dirty.clear();
    let failure: Error | undefined;
    for (const id of ids) {
      if (this.stopped) return;
      // Redis away: the account stays due (its records wait in the ledger), and the next pass tries again.
      await this.follow(id).catch((err: Error) => {
        this.dirty.add(id);
        failure ??= err;
      });
    }
    if (failure) throw failure;
  }

  /** Applies an account's records after its rollup cursor, a batch at a time, until none is left. */
  async follow(accountId: string): Promise<void> {
    const a = this.shared.keys.slot(accountId, 'a');
    for (;;) {
      // No cursor: the account never settled since rollups left SETTLE, so nothing is waiting.
      const after = await this.shared.redis.hget(a, 'rc');
      if (after === null) return;
      const entries = await this.shared.redis.xrange(this.shared.keys.slot(accountId, 'u'), `(${after}`, '+', 'COUNT', BATCH);
      if (entries.length === 0) return;
      const input = { after, last: entries[entries.length - 1][0], days: summed(accountId, entries), keep_days: ROLLUP_DAYS };
      const applied = Number(await this.scripts.tmRollupApply([a], [JSON.stringify(input)])) === 1;
      if (applied && entries.length < BATCH) return;
    }
  }
}

/** The records' sums per UTC day and `m:<model>` or `k:<key id>` field, as the script takes them. */
function summed(accountId: string, entries: [string, string[]][]): { day: number; rows: [string, Sums][] }[] {
  const days = new Map<number, Map<string, Sums>>();
  for (const [cursor, fields] of entries) {
    const r = parseUsageEntry(accountId, cursor, fields);
    const day = Math.floor(cursorMs(cursor) / 86_400_000);
    let rows = days.get(day);
    if (!rows) days.set(day, (rows = new Map()));
    const add = (field: string) => {
      const sums = rows.get(field) ?? [0, 0, 0, 0, 0, 0];
      sums[0] += 1;
      sums[1] += r.promptTokens;
      sums[2] += r.completionTokens;
      sums[3] += r.cachedTokens;
      sums[4] += r.reasoningTokens;
      sums[5] += r.chargedTokens;
      rows.set(field, sums);
    };
    add(`m:${r.model}`);
    if (r.keyId !== null) add(`k:${r.keyId}`);
  }
  return [...days].map(([day, rows]) => ({ day, rows: [...rows] }));
}
