/**
 * Budgets that reset, one contract for both stores: checked and counted in the reserve step with the balance (the
 * allowance lowered to what is left), corrected at settlement, given back at release and lease lapse, reset at the
 * start of each UTC day, week (Monday) and month by a clock the test moves, and free of writes for those without.
 */
import { makeStore, keyWithTokens, newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { Budget, BudgetPeriod } from '../../src/limits/budget';
import type { ReserveResult } from '../../src/store/records/metering';
import { reserveReq, settlement, sleep, type Key } from './contract-fixtures';

const at = (iso: string) => Date.parse(iso);
const seconds = (iso: string) => at(iso) / 1000;
/**
 * 100 tokens a request: fixed 10, 90 completion tokens at 1 each. Leases of a month, so moving the clock (the memory
 * store's leases run on it) lapses none.
 */
const req = (key: Key, id: string, over: Parameters<typeof reserveReq>[2] = {}) =>
  reserveReq(key, id, { allowance: 90, leaseMs: 31 * 86_400_000, ...over });

function budgetRefusal(result: ReserveResult) {
  if (result.kind !== 'budget_exceeded') throw new Error(`expected a budget refusal, got ${JSON.stringify(result)}`);
  return result.refusal;
}

describe.each(storeKinds)('%s store: budgets', (kind) => {
  let s: StoreUnderTest;
  /** The store's clock: Wednesday 2025-01-15, noon UTC, until a test moves it. */
  const clock = { ms: 0 };
  beforeEach(async () => {
    clock.ms = at('2025-01-15T12:00:00Z');
    s = await makeStore(kind, { now: () => clock.ms });
  });
  afterEach(async () => {
    await s.close();
  });

  const budgetKey = (budget: Budget | null, extra: { accountId?: string } = {}) =>
    keyWithTokens(s.store, extra.accountId ? 0 : 1_000_000, { budget, ...extra });

  it("admits what fits a key's budget, lowers the last allowance to what is left, and refuses the rest until it resets", async () => {
    const key = await budgetKey({ tokens: 250, period: 'day' });
    expect(await s.store.reserve(req(key, 'r1'))).toEqual({ kind: 'reserved', allowance: 90, amount: 100 });
    expect(await s.store.reserve(req(key, 'r2'))).toEqual({ kind: 'reserved', allowance: 90, amount: 100 });
    expect(await s.store.reserve(req(key, 'r3'))).toEqual({ kind: 'reserved', allowance: 40, amount: 50 });
    expect(budgetRefusal(await s.store.reserve(req(key, 'r4')))).toEqual({
      level: 'key',
      budget: { tokens: 250, period: 'day' },
      used: 250,
      requested: 11,
      resetsAt: seconds('2025-01-16T00:00:00Z'),
    });
    expect((await s.store.getKey(key.id))?.budget).toEqual({
      tokens: 250,
      period: 'day',
      spent: 0,
      reserved: 250,
      periodStart: seconds('2025-01-15T00:00:00Z'),
      resetsAt: seconds('2025-01-16T00:00:00Z'),
    });
    expect((await s.store.getKey(key.id))?.reserved).toBe(250);
  });

  it('counts a refusal nowhere: not by the budget, the balance, nor a rate limit after it', async () => {
    const key = await keyWithTokens(s.store, 150, { budget: { tokens: 1_000, period: 'day' }, limits: { rpm: 1 } });
    await s.store.reserve(req(key, 'r1'));
    // The balance (50 left) refuses: the budget holds only r1.
    expect((await s.store.reserve(req(key, 'r2', { fixed: 60 }))).kind).toBe('insufficient_quota');
    // The rpm refuses after the budget admitted: the budget holds only r1.
    expect((await s.store.reserve(req(key, 'r3', { allowance: 10 }))).kind).toBe('rate_limited');
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ spent: 0, reserved: 100 });
    const tight = await budgetKey({ tokens: 110, period: 'day' });
    await s.store.reserve(req(tight, 't1'));
    budgetRefusal(await s.store.reserve(req(tight, 't2')));
    expect((await s.store.getKey(tight.id))?.budget).toMatchObject({ spent: 0, reserved: 100 });
    expect((await s.store.getKey(tight.id))?.reserved).toBe(100);
  });

  it('corrects the count to the charged tokens at settlement, once, and gives back a release', async () => {
    const key = await budgetKey({ tokens: 1_000, period: 'week' });
    await s.store.reserve(req(key, 'r1'));
    await s.store.reserve(req(key, 'r2'));
    expect(await s.store.settle(settlement(key, 'r1', 40))).toMatchObject({ kind: 'settled' });
    expect(await s.store.settle(settlement(key, 'r1', 40))).toEqual({ kind: 'duplicate' });
    await s.store.release(key.accountId, 'r2');
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ spent: 40, reserved: 0 });
    // An upstream that reports more than was reserved is charged in full, and the budget says so.
    await s.store.reserve(req(key, 'r3'));
    await s.store.settle(settlement(key, 'r3', 990));
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ spent: 1_030, reserved: 0 });
    expect(budgetRefusal(await s.store.reserve(req(key, 'r4')))).toMatchObject({ used: 1_030 });
  });

  it("shares an account's budget among its keys, and checks the key's own first", async () => {
    const accountId = await newAccount(s.store);
    await s.store.grantPackage(accountId, { tokens: 1_000_000, expiresAt: null });
    const updated = await s.store.updateAccount(accountId, { budget: { tokens: 300, period: 'month' } });
    expect(updated?.budget).toMatchObject({ tokens: 300, period: 'month', spent: 0, reserved: 0 });
    const a = await budgetKey(null, { accountId });
    const b = await budgetKey({ tokens: 100, period: 'day' }, { accountId });
    await s.store.reserve(req(b, 'b1'));
    expect(budgetRefusal(await s.store.reserve(req(b, 'b2')))).toMatchObject({ level: 'key', used: 100 });
    await s.store.reserve(req(a, 'a1'));
    await s.store.reserve(req(a, 'a2'));
    expect(budgetRefusal(await s.store.reserve(req(a, 'a3')))).toMatchObject({
      level: 'account',
      budget: { tokens: 300, period: 'month' },
      used: 300,
      resetsAt: seconds('2025-02-01T00:00:00Z'),
    });
    expect((await s.store.getAccount(accountId))?.budget).toMatchObject({ spent: 0, reserved: 300 });
  });

  // Each period: the last moment of one, then the first of the next (weeks start on Monday).
  const rollovers: [BudgetPeriod, 'key' | 'account', string, string][] = [
    ['day', 'key', '2025-01-15T23:59:59.999Z', '2025-01-16T00:00:00Z'],
    ['week', 'key', '2025-01-19T23:59:59.999Z', '2025-01-20T00:00:00Z'],
    ['month', 'key', '2025-02-28T23:59:59.999Z', '2025-03-01T00:00:00Z'],
    ['day', 'account', '2025-12-31T23:59:59.999Z', '2026-01-01T00:00:00Z'],
    ['week', 'account', '2025-01-19T23:59:59.999Z', '2025-01-20T00:00:00Z'],
    ['month', 'account', '2024-02-29T23:59:59.999Z', '2024-03-01T00:00:00Z'],
  ];
  it.each(rollovers)(
    'a %s budget on the %s resets at the start of the next UTC period (%s, then %s)',
    async (period, level, last, next) => {
      clock.ms = at(last) - 3_600_000;
      const key =
        level === 'key'
          ? await budgetKey({ tokens: 200, period })
          : await keyWithTokens(s.store, 1_000_000).then(async (k) => {
              await s.store.updateAccount(k.accountId, { budget: { tokens: 200, period } });
              return k;
            });
      await s.store.reserve(req(key, 'r1'));
      await s.store.settle(settlement(key, 'r1', 100));
      await s.store.reserve(req(key, 'r2'));
      clock.ms = at(last);
      expect(budgetRefusal(await s.store.reserve(req(key, 'r3')))).toMatchObject({ level, used: 200, resetsAt: seconds(next) });
      clock.ms = at(next);
      expect(await s.store.reserve(req(key, 'r3'))).toMatchObject({ kind: 'reserved', amount: 100 });
      const status = level === 'key' ? (await s.store.getKey(key.id))?.budget : (await s.store.getAccount(key.accountId))?.budget;
      expect(status).toMatchObject({ spent: 0, reserved: 100, periodStart: seconds(next) });
    },
  );

  it('charges a request admitted before the reset to the period that admitted it, not the next', async () => {
    clock.ms = at('2025-01-15T23:59:00Z');
    const key = await budgetKey({ tokens: 200, period: 'day' });
    await s.store.reserve(req(key, 'late'));
    clock.ms = at('2025-01-16T00:01:00Z');
    await s.store.reserve(req(key, 'early'));
    await s.store.settle(settlement(key, 'late', 100));
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ spent: 0, reserved: 100, periodStart: seconds('2025-01-16T00:00:00Z') });
    await s.store.release(key.accountId, 'early');
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ spent: 0, reserved: 0 });
  });

  it('gives back what a lapsed reservation held, and still charges its late settlement', async () => {
    const key = await budgetKey({ tokens: 1_000, period: 'day' });
    await s.store.reserve(req(key, 'crashed', { leaseMs: 50 }));
    // The lease lapses: on the server's clock in Redis, on the store's in memory.
    clock.ms += 100;
    await sleep(100);
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ spent: 0, reserved: 0 });
    await s.store.settle(settlement(key, 'crashed', 70));
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ spent: 70, reserved: 0 });
  });

  it('replaces what a request that reserves again held, and holds nothing once the budget refuses it', async () => {
    const key = await budgetKey({ tokens: 150, period: 'day' });
    await s.store.reserve(req(key, 'r1'));
    expect(await s.store.reserve(req(key, 'r1', { fixed: 5 }))).toMatchObject({ kind: 'reserved', amount: 95 });
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ reserved: 95 });
    budgetRefusal(await s.store.reserve(req(key, 'r1', { fixed: 200 })));
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ reserved: 0 });
  });

  it('applies a changed budget from the next request, keeps what the period used, and shows it in listings', async () => {
    const key = await budgetKey({ tokens: 1_000, period: 'day' });
    await s.store.reserve(req(key, 'r1'));
    await s.store.settle(settlement(key, 'r1', 100));
    const changed = await s.store.updateKey(key.id, { budget: { tokens: 150, period: 'day' } });
    expect(changed?.budget).toMatchObject({ tokens: 150, spent: 100 });
    expect(await s.store.reserve(req(key, 'r2'))).toMatchObject({ kind: 'reserved', allowance: 40 });
    await s.store.release(key.accountId, 'r2');
    const [listed] = await s.store.listKeys(key.accountId);
    expect(listed.budget).toMatchObject({ tokens: 150, period: 'day', spent: 100, reserved: 0 });
    await s.store.updateKey(key.id, { budget: null });
    expect((await s.store.getKey(key.id))?.budget).toBeNull();
    expect(await s.store.reserve(req(key, 'r3'))).toEqual({ kind: 'reserved', allowance: 90, amount: 100 });
  });

  it('admits exactly what fits of many concurrent reservations', async () => {
    const key = await budgetKey({ tokens: 3_000, period: 'day' });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => s.store.reserve(req(key, `c${i}`))));
    expect(results.filter((r) => r.kind === 'reserved')).toHaveLength(30);
    expect(results.filter((r) => r.kind === 'budget_exceeded')).toHaveLength(70);
    expect((await s.store.getKey(key.id))?.budget).toMatchObject({ reserved: 3_000 });
  });

  it('writes nothing for budgets when neither key nor account has one', async () => {
    const key = await budgetKey(null);
    expect(await s.store.reserve(req(key, 'r1'))).toEqual({ kind: 'reserved', allowance: 90, amount: 100 });
    await s.store.settle(settlement(key, 'r1', 50));
    expect((await s.store.getKey(key.id))?.budget).toBeNull();
    expect((await s.store.getAccount(key.accountId))?.budget).toBeNull();
    if (s.redis) {
      const fields = [
        ...(await s.redis.hkeys(`${s.prefix}{${key.accountId}}:a`)),
        ...(await s.redis.hkeys(`${s.prefix}{${key.accountId}}:k:${key.id}`)),
      ];
      expect(fields.filter((f) => ['bp', 'bs', 'bh'].includes(f))).toEqual([]);
    }
  });
});
