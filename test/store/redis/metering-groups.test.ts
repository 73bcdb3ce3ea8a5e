/**
 * Group commit on Redis (lua/metering/reserve-group.lua and settle-group.lua through RedisMetering): an account's
 * reservations, and its settlements, made in one turn of the event loop run as one script call, each exactly as the
 * script alone would run it, in order.
 */
import { createHash } from 'node:crypto';
import { startMonitor, type Monitor } from '../../helpers/monitor';
import { makeStore, keyWithTokens, type StoreUnderTest } from '../../helpers/stores';
import { reserveReq, settlement, type Key } from '../contract-fixtures';

/**
 * Script calls sent on these accounts' slots (an EVALSHA that the first run follows with EVAL, the script's text, is
 * one call). MONITOR sees every client of the shared Redis: other suites' calls name other accounts.
 */
const scriptCalls = (commands: { args: string[]; lua: boolean }[], ...accounts: string[]) =>
  commands.filter((c) => !c.lua && /^evalsha$/i.test(c.args[0]) && accounts.some((a) => c.args[3]?.includes(`{${a}}`))).length;

describe('redis store: reservations and settlements grouped per account and turn', () => {
  let s: StoreUnderTest;
  let monitor: Monitor;
  beforeEach(async () => {
    s = await makeStore('redis');
    monitor = await startMonitor(process.env.TEST_REDIS_URL as string, 'settle-group');
  });
  afterEach(async () => {
    monitor.close();
    await s.close();
  });
  /** Each key's request reserved, one after another (each in a turn of its own). */
  const reserveEach = async (pairs: readonly (readonly [Key, string])[]) => {
    for (const [k, id] of pairs) await s.store.reserve(reserveReq(k, id));
  };
  /** Damages `field` of key k's hash by hand (not a number), so a step on the key errs. */
  const damage = (k: Key, field: string) => s.redis!.hset(`${s.prefix}{${k.accountId}}:k:${k.id}`, field, 'damaged');

  it('reserves one account’s requests of one turn in one script call, in order: none passes what the earlier left', async () => {
    // The race group commit must not open: three reservations of 110 on a balance of 250, in one script.
    const k = await keyWithTokens(s.store, 250);
    let results: unknown[] = [];
    const commands = await monitor.during(async () => {
      results = await Promise.all(['r1', 'r2', 'r3'].map((id) => s.store.reserve(reserveReq(k, id))));
    });
    expect(scriptCalls(commands, k.accountId)).toBe(1);
    expect(results).toEqual([
      { kind: 'reserved', allowance: 100, amount: 110 },
      { kind: 'reserved', allowance: 100, amount: 110 },
      // 30 left covers the prompt and 20 of the allowance: lowered, as a reservation alone would be.
      { kind: 'reserved', allowance: 20, amount: 30 },
    ]);
    expect(await s.store.getAccount(k.accountId)).toMatchObject({ balance: 0, reserved: 250 });
  });

  it('settles one account’s requests of one turn in one script call, each charged once with its own balance', async () => {
    const k = await keyWithTokens(s.store, 1000);
    const ids = ['r1', 'r2', 'r3', 'r4'];
    for (const id of ids) await s.store.reserve(reserveReq(k, id));
    let results: unknown[] = [];
    const commands = await monitor.during(async () => {
      results = await Promise.all(ids.map((id, i) => s.store.settle(settlement(k, id, 10 * (i + 1)))));
    });
    // One call where there were four; the balances are those of the charges in order (1000 - 10, - 20, - 30, - 40).
    expect(scriptCalls(commands, k.accountId)).toBe(1);
    expect(results).toEqual([
      { kind: 'settled', balance: 990 - 330 },
      { kind: 'settled', balance: 970 - 220 },
      { kind: 'settled', balance: 940 - 110 },
      { kind: 'settled', balance: 900 },
    ]);
    expect(await s.store.getAccount(k.accountId)).toMatchObject({ balance: 900, reserved: 0 });
    expect(await s.redis!.xlen(`${s.prefix}{${k.accountId}}:u`)).toBe(4);
  });

  it('charges a request id that comes twice in one group once: the second is a duplicate', async () => {
    const k = await keyWithTokens(s.store, 1000);
    await s.store.reserve(reserveReq(k, 'r1'));
    const results = await Promise.all([s.store.settle(settlement(k, 'r1', 40)), s.store.settle(settlement(k, 'r1', 40))]);
    expect(results).toEqual([{ kind: 'settled', balance: 960 }, { kind: 'duplicate' }]);
    // And a retry without its reservation, in a group of its own, is one too.
    expect(await s.store.settle(settlement(k, 'r1', 40))).toEqual({ kind: 'duplicate' });
    expect(await s.store.getAccount(k.accountId)).toMatchObject({ balance: 960, reserved: 0 });
    expect(await s.redis!.xlen(`${s.prefix}{${k.accountId}}:u`)).toBe(1);
  });

  it('marks each settlement of a group settled, so no retry of any of them charges again', async () => {
    const k = await keyWithTokens(s.store, 1000);
    // Two held reservations then two retries of settled ones: the step's read of this hour's marks is its own each time.
    await s.store.reserve(reserveReq(k, 'a'));
    await s.store.reserve(reserveReq(k, 'b'));
    await Promise.all([s.store.settle(settlement(k, 'a', 5)), s.store.settle(settlement(k, 'b', 5))]);
    const again = await Promise.all(['a', 'b'].map((id) => s.store.settle(settlement(k, id, 5))));
    expect(again).toEqual([{ kind: 'duplicate' }, { kind: 'duplicate' }]);
    expect(await s.store.getAccount(k.accountId)).toMatchObject({ balance: 990 });
  });

  it('keeps the marks of earlier requests when a group settles one without its reservation before one with it', async () => {
    // Marks are filed by their fingerprint's first byte (helpers/settled-marks.lua): `old` shares `b`'s field, `a` not.
    const firstByte = (id: string) => createHash('sha1').update(id).digest()[0];
    let old = 'old-0';
    for (let n = 1; firstByte(old) !== firstByte('b'); n++) old = `old-${n}`;
    expect(firstByte('a')).not.toBe(firstByte('b'));
    const k = await keyWithTokens(s.store, 1000);
    await s.store.reserve(reserveReq(k, old));
    await s.store.settle(settlement(k, old, 1));
    await s.store.reserve(reserveReq(k, 'b'));
    // `a` holds no reservation (its lease ran out), so the step reads this hour's marks for it; `b` must not reuse that read.
    expect(await Promise.all([s.store.settle(settlement(k, 'a', 2)), s.store.settle(settlement(k, 'b', 3))])).toEqual([
      { kind: 'settled', balance: expect.any(Number) },
      { kind: 'settled', balance: 994 },
    ]);
    for (const id of [old, 'a', 'b']) expect(await s.store.settle(settlement(k, id, 1))).toEqual({ kind: 'duplicate' });
    expect(await s.store.getAccount(k.accountId)).toMatchObject({ balance: 994 });
  });

  it('keeps the marks of earlier requests when a group’s duplicate comes before a settlement in another field', async () => {
    // A duplicate's step reads this hour's marks and marks nothing: its read must not be the next step's.
    const firstByte = (id: string) => createHash('sha1').update(id).digest()[0];
    let old = 'old-0';
    for (let n = 1; firstByte(old) !== firstByte('b'); n++) old = `old-${n}`;
    expect(firstByte('a')).not.toBe(firstByte('b'));
    const k = await keyWithTokens(s.store, 1000);
    await reserveEach([
      [k, old],
      [k, 'a'],
    ]);
    await s.store.settle(settlement(k, old, 1));
    await s.store.settle(settlement(k, 'a', 2));
    await s.store.reserve(reserveReq(k, 'b'));
    expect(await Promise.all([s.store.settle(settlement(k, 'a', 2)), s.store.settle(settlement(k, 'b', 3))])).toEqual([
      { kind: 'duplicate' },
      { kind: 'settled', balance: 994 },
    ]);
    for (const id of [old, 'a', 'b']) expect(await s.store.settle(settlement(k, id, 1))).toEqual({ kind: 'duplicate' });
  });

  it('lets one reservation’s failing step fail that reservation only, in the same call', async () => {
    // The bad neighbour: a key whose hash was damaged by hand (its cap is not a number) makes RESERVE's step err.
    const a = await keyWithTokens(s.store, 1000);
    const b = await keyWithTokens(s.store, 0, { accountId: a.accountId });
    await damage(b, 'limit');
    let results: PromiseSettledResult<unknown>[] = [];
    const commands = await monitor.during(async () => {
      results = await Promise.allSettled([
        s.store.reserve(reserveReq(b, 'r1')),
        s.store.reserve(reserveReq(a, 'r2')),
        s.store.reserve(reserveReq(a, 'r3')),
      ]);
    });
    expect(scriptCalls(commands, a.accountId)).toBe(1);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/^RESERVE failed in its group: /);
    expect(await s.store.getAccount(a.accountId)).toMatchObject({ balance: 780, reserved: 220 });
  });

  it('lets one settlement’s failing step fail that settlement only: the others are settled, not duplicates', async () => {
    // A settled answer must reach the metrics and the host's onSettle: a group's others are never re-sent as retries.
    const a = await keyWithTokens(s.store, 1000);
    const b = await keyWithTokens(s.store, 0, { accountId: a.accountId });
    await reserveEach([
      [a, 'r1'],
      [b, 'r2'],
      [a, 'r3'],
    ]);
    await damage(b, 'spent');
    const results = await Promise.allSettled([
      s.store.settle(settlement(a, 'r1', 10)),
      s.store.settle(settlement(b, 'r2', 20)),
      s.store.settle(settlement(a, 'r3', 30)),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
      { kind: 'settled', balance: expect.any(Number) },
      'rejected',
      { kind: 'settled', balance: expect.any(Number) },
    ]);
  });

  it('sends each account’s settlements of a turn in a call of its own (a script runs on one slot)', async () => {
    const a = await keyWithTokens(s.store, 1000);
    const b = await keyWithTokens(s.store, 1000);
    await reserveEach([
      [a, 'a1'],
      [a, 'a2'],
      [b, 'b1'],
    ]);
    let results: unknown[] = [];
    const commands = await monitor.during(async () => {
      results = await Promise.all([
        s.store.settle(settlement(a, 'a1', 10)),
        s.store.settle(settlement(b, 'b1', 30)),
        s.store.settle(settlement(a, 'a2', 20)),
      ]);
    });
    expect(scriptCalls(commands, a.accountId, b.accountId)).toBe(2);
    expect(results).toEqual([
      { kind: 'settled', balance: 990 - 110 },
      { kind: 'settled', balance: 970 },
      { kind: 'settled', balance: 970 },
    ]);
  });
});
