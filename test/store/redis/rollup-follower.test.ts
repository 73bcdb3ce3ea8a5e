/**
 * The rollup follower (redis-rollup-follower.ts, lua/rollups/apply.lua): the daily rollups are derived from the
 * ledger after settlement, each record exactly once whichever process applies it, none lost to a process killed
 * before it applied them, none trimmed from the ledger before they are in the rollups, and an account whose rollups
 * the settle step wrote (before) carried on without counting a record twice.
 */
import Redis from 'ioredis';
import { RedisStore } from '../../../src/store/redis/redis-store';
import { RedisShipSource } from '../../../src/store/redis/redis-ship-source';
import { DAY_SECONDS } from '../../../src/store/records/rollups';
import { makeStore, keyWithTokens, testRedisUrl, type StoreUnderTest } from '../../helpers/stores';
import { nowS, settlement } from '../contract-fixtures';

describe('redis store: the rollup follower', () => {
  let s: StoreUnderTest;
  const others: RedisStore[] = [];
  beforeEach(async () => {
    s = await makeStore('redis');
  });
  afterEach(async () => {
    for (const o of others.splice(0)) await o.close();
    await s.close();
  });
  const today = () => Math.floor(nowS() / DAY_SECONDS);
  /** Another process's store on the same Redis, its passes run by the test. */
  const another = () => {
    const o = new RedisStore(new Redis(testRedisUrl()), { prefix: s.prefix, rollupIntervalMs: 3_600_000 });
    others.push(o);
    return o;
  };
  const modelRow = async (accountId: string) =>
    (await s.store.daily!({ accountId, sinceDay: today(), untilDay: today() })).rows.find((r) => r.by === 'model');

  it('rolls up each record once when several processes follow the same account at once', async () => {
    const k = await keyWithTokens(s.store, 100_000);
    for (let i = 0; i < 30; i++) await s.store.settle(settlement(k, `r${i}`, 10 + i));
    const followers = [another(), another(), another()];
    await Promise.all(followers.map((f) => f.rollups.follow(k.accountId)));
    await Promise.all(followers.map((f) => f.rollups.follow(k.accountId)));
    const charged = (await s.store.usage({ accountId: k.accountId, limit: 100 })).reduce((n, r) => n + r.chargedTokens, 0);
    expect(await modelRow(k.accountId)).toMatchObject({ requests: 30, chargedTokens: charged });
  });

  it('leaves what a process settled and never rolled up to the next pass of any other (its first visits every account)', async () => {
    const k = await keyWithTokens(s.store, 10_000);
    const crashed = another();
    await crashed.settle(settlement(k, 'r1', 20));
    await crashed.rollups.stop(); // killed before its follower's pass
    expect(await s.redis!.exists(`${s.prefix}{${k.accountId}}:d:${today()}`)).toBe(0);
    const next = another();
    await next.rollups.pass();
    expect(await modelRow(k.accountId)).toMatchObject({ requests: 1, chargedTokens: 20 });
  });

  it('ships and trims no ledger record the rollups do not hold yet', async () => {
    const k = await keyWithTokens(s.store, 10_000);
    const settling = another();
    await settling.settle(settlement(k, 'r1', 20));
    await settling.settle(settlement(k, 'r2', 30));
    const source = new RedisShipSource(s.redis!, s.prefix);
    // Nothing is read for shipping before the rollups hold it; trimmed, nothing goes either.
    expect(await source.read(k.accountId, '0-0', 10)).toEqual([]);
    const [, last] = (await s.redis!.xrange(`${s.prefix}{${k.accountId}}:u`, '-', '+')).map(([id]) => id);
    expect(await source.lease(k.accountId, 'me', 10_000)).toBe(true);
    expect(await source.advance(k.accountId, 'me', last, 2, Date.now() + 1)).toBe(true);
    await source.trim(k.accountId, Date.now() + 1);
    expect(await s.redis!.xlen(`${s.prefix}{${k.accountId}}:u`)).toBe(2);
    await settling.rollups.follow(k.accountId);
    expect(await modelRow(k.accountId)).toMatchObject({ requests: 2, chargedTokens: 50 });
    expect(await source.advance(k.accountId, 'me', last, 0, Date.now() + 1)).toBe(true);
    expect(await s.redis!.xlen(`${s.prefix}{${k.accountId}}:u`)).toBe(0);
  });

  it('carries on from rollups the settle step wrote before, counting none of their records again', async () => {
    const k = await keyWithTokens(s.store, 10_000);
    const slot = `${s.prefix}{${k.accountId}}:`;
    // As the step before left it: a record, today's rollup of it, `ru`, and no follower cursor.
    await s.redis!.xadd(
      `${slot}u`,
      '*',
      'request_id',
      'r0',
      'key_id',
      k.id,
      'model',
      'acme/m1',
      'prompt_tokens',
      10,
      'completion_tokens',
      5,
      'charged_tokens',
      15,
      'estimated',
      0,
      'stream',
      0,
      'status',
      200,
      'endpoint',
      'chat',
    );
    await s.redis!.hset(`${slot}d:${today()}`, 'm:acme/m1', '1:10:5:0:0:15', `k:${k.id}`, '1:10:5:0:0:15');
    await s.redis!.hset(`${slot}a`, 'ru', 0);
    const settling = another();
    await settling.settle(settlement(k, 'r1', 20));
    await settling.rollups.follow(k.accountId);
    await settling.rollups.follow(k.accountId);
    expect(await modelRow(k.accountId)).toMatchObject({ requests: 2, chargedTokens: 35 });
    expect((await s.store.daily!({ accountId: k.accountId, sinceDay: today(), untilDay: today() })).from).toBe(today()); // whole: `ru` kept
  });
});
