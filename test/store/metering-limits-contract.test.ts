/**
 * The key and account levels of the limits, one contract for both stores: checked and counted in the reserve step
 * itself, corrected at settlement, freed at release, settle and lease lapse, and free of cost for those without.
 */
import { makeStore, keyWithTokens, newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { Limits } from '../../src/limits/limits';
import type { ReserveRequest, ReserveResult, Settlement } from '../../src/store/records/metering';

type Key = { id: string; accountId: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const reserveReq = (key: Key, requestId: string, over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  accountId: key.accountId,
  keyId: key.id,
  requestId,
  model: 'acme/m1',
  fixed: 10,
  unit: 1,
  allowance: 90,
  leaseMs: 60_000,
  ...over,
});

const settlement = (key: Key, requestId: string, charged: number): Settlement => ({
  accountId: key.accountId,
  keyId: key.id,
  requestId,
  model: 'acme/m1',
  promptTokens: 10,
  completionTokens: charged - 10,
  chargedTokens: charged,
  estimated: false,
  stream: false,
  status: 200,
});

function refusal(result: ReserveResult) {
  if (result.kind !== 'rate_limited') throw new Error(`expected a rate-limit refusal, got ${JSON.stringify(result)}`);
  return result.refusal;
}

describe.each(storeKinds)('%s store: key and account limits', (kind) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore(kind);
  });
  afterEach(async () => {
    await s.close();
  });

  const limitedKey = (limits: Limits | null, extra: { accountId?: string } = {}) => keyWithTokens(s.store, 1_000_000, { limits, ...extra });

  it("refuses past a key's rpm in the reserve step, reserving nothing for the refused request", async () => {
    const key = await limitedKey({ rpm: 2 });
    const first = await s.store.reserve(reserveReq(key, 'r1'));
    expect(first).toMatchObject({ kind: 'reserved', amount: 100, limitUse: [{ requests: { limit: 2, remaining: 1 } }] });
    await s.store.reserve(reserveReq(key, 'r2'));
    const r = refusal(await s.store.reserve(reserveReq(key, 'r3')));
    expect(r).toMatchObject({ level: 'key', kind: 'requests', limit: 2, used: 2, requested: 100, tooLarge: false });
    expect(r.retryAfterMs).toBeGreaterThan(0);
    expect(r.use.requests?.remaining).toBe(0);
    expect((await s.store.getKey(key.id))?.reserved).toBe(200);
  });

  it("shares an account's limits among its keys, and checks the key's own too", async () => {
    const accountId = await newAccount(s.store);
    await s.store.updateAccount(accountId, { limits: { rpm: 3 } });
    const a = await limitedKey(null, { accountId });
    const b = await limitedKey({ rpm: 1 }, { accountId });
    expect((await s.store.reserve(reserveReq(a, 'a1'))).kind).toBe('reserved');
    expect((await s.store.reserve(reserveReq(b, 'b1'))).kind).toBe('reserved');
    // b's own limit refuses first; a refusal at one level counts at no level.
    expect(refusal(await s.store.reserve(reserveReq(b, 'b2')))).toMatchObject({ level: 'key', limit: 1 });
    expect((await s.store.reserve(reserveReq(a, 'a2'))).kind).toBe('reserved');
    expect(refusal(await s.store.reserve(reserveReq(a, 'a3')))).toMatchObject({ level: 'account', kind: 'requests', limit: 3, used: 3 });
    expect((await s.store.getAccount(accountId))?.limitUse).toMatchObject({ requests: { limit: 3, remaining: 0 } });
    expect((await s.store.getKey(b.id))?.limitUse).toMatchObject({ requests: { limit: 1, remaining: 0 } });
  });

  it('leaves no trace on the key when the account refuses', async () => {
    const accountId = await newAccount(s.store);
    await s.store.updateAccount(accountId, { limits: { rpm: 1 } });
    const key = await limitedKey({ rpm: 5, tpm: 1_000 }, { accountId });
    await s.store.reserve(reserveReq(key, 'r1'));
    expect(refusal(await s.store.reserve(reserveReq(key, 'r2'))).level).toBe('account');
    expect((await s.store.getKey(key.id))?.limitUse).toMatchObject({ requests: { remaining: 4 }, tokens: { remaining: 900 } });
  });

  it('counts the reservation against tpm at admission and corrects it to the charged tokens at settlement', async () => {
    const key = await limitedKey({ tpm: 250 });
    await s.store.reserve(reserveReq(key, 'r1'));
    await s.store.reserve(reserveReq(key, 'r2'));
    expect((await s.store.getKey(key.id))?.limitUse?.tokens?.remaining).toBe(50);
    const r = refusal(await s.store.reserve(reserveReq(key, 'r3')));
    expect(r).toMatchObject({ kind: 'tokens', limit: 250, used: 200, requested: 100 });
    await s.store.settle(settlement(key, 'r1', 30));
    expect((await s.store.getKey(key.id))?.limitUse?.tokens?.remaining).toBe(120);
    await s.store.release(key.accountId, 'r2');
    expect((await s.store.getKey(key.id))?.limitUse?.tokens?.remaining).toBe(220);
    expect((await s.store.reserve(reserveReq(key, 'r3'))).kind).toBe('reserved');
  });

  it('refuses a request whose reservation alone exceeds tpm as too large', async () => {
    const key = await limitedKey({ tpm: 50 });
    expect(refusal(await s.store.reserve(reserveReq(key, 'r1')))).toMatchObject({ kind: 'tokens', tooLarge: true, requested: 100 });
  });

  it('lowers a default allowance (no max_tokens) to what tpm could ever admit, rather than refuse it', async () => {
    const key = await limitedKey({ tpm: 50 });
    const lowered = await s.store.reserve(reserveReq(key, 'r1', { defaultAllowance: true }));
    expect(lowered).toMatchObject({ kind: 'reserved', allowance: 40, amount: 50 });
    // Counted at that: the window is now full.
    expect(refusal(await s.store.reserve(reserveReq(key, 'r2', { defaultAllowance: true })))).toMatchObject({ kind: 'tokens' });
  });

  it('frees a max_concurrent slot at settle and at release', async () => {
    const key = await limitedKey({ maxConcurrent: 2 });
    await s.store.reserve(reserveReq(key, 'r1'));
    await s.store.reserve(reserveReq(key, 'r2'));
    expect(refusal(await s.store.reserve(reserveReq(key, 'r3')))).toMatchObject({ kind: 'concurrent', limit: 2, used: 2 });
    await s.store.settle(settlement(key, 'r1', 40));
    expect((await s.store.reserve(reserveReq(key, 'r3'))).kind).toBe('reserved');
    expect((await s.store.reserve(reserveReq(key, 'r4'))).kind).toBe('rate_limited');
    await s.store.release(key.accountId, 'r2');
    expect((await s.store.reserve(reserveReq(key, 'r4'))).kind).toBe('reserved');
  });

  it('frees the slot of a request whose lease lapsed (a crashed proxy), unless it was renewed', async () => {
    const key = await limitedKey({ maxConcurrent: 2 });
    await s.store.reserve(reserveReq(key, 'crashed', { leaseMs: 100 }));
    await s.store.reserve(reserveReq(key, 'alive', { leaseMs: 100 }));
    await sleep(60);
    expect(await s.store.renew(key.accountId, 'alive', 60_000)).toBe(true);
    await sleep(80);
    expect((await s.store.getKey(key.id))?.limitUse?.concurrent).toEqual({ limit: 2, inFlight: 1 });
    expect((await s.store.reserve(reserveReq(key, 'next'))).kind).toBe('reserved');
    expect((await s.store.reserve(reserveReq(key, 'over'))).kind).toBe('rate_limited');
  });

  it('does not count a request that reserves again twice, and forgets one the balance then refuses', async () => {
    const key = await keyWithTokens(s.store, 150, { limits: { rpm: 2, tpm: 1_000, maxConcurrent: 1 } });
    await s.store.reserve(reserveReq(key, 'r1'));
    expect(await s.store.reserve(reserveReq(key, 'r1', { fixed: 5 }))).toMatchObject({ kind: 'reserved', amount: 95 });
    expect((await s.store.getKey(key.id))?.limitUse).toMatchObject({
      requests: { remaining: 1 },
      tokens: { remaining: 905 },
      concurrent: { inFlight: 1 },
    });
    // Reserving again for more than the balance: refused, and the request holds nothing anywhere.
    expect((await s.store.reserve(reserveReq(key, 'r1', { fixed: 200 }))).kind).toBe('insufficient_quota');
    expect((await s.store.getKey(key.id))?.limitUse).toMatchObject({
      requests: { remaining: 2 },
      tokens: { remaining: 1_000 },
      concurrent: { inFlight: 0 },
    });
  });

  it('applies changed limits from the next request, and shows them on the key and account', async () => {
    const key = await limitedKey(null);
    expect((await s.store.getKey(key.id))?.limits).toBeNull();
    expect(await s.store.updateKey(key.id, { limits: { rpm: 1 } })).toMatchObject({ id: key.id, limits: { rpm: 1 } });
    expect(await s.store.updateKey('key_missing', { limits: { rpm: 1 } })).toBeUndefined();
    await s.store.reserve(reserveReq(key, 'r1'));
    expect((await s.store.reserve(reserveReq(key, 'r2'))).kind).toBe('rate_limited');
    await s.store.updateKey(key.id, { limits: null });
    const free = await s.store.reserve(reserveReq(key, 'r2'));
    expect(free.kind).toBe('reserved');
    expect(free).not.toHaveProperty('limitUse');
    expect(await s.store.getKey(key.id)).toMatchObject({ limits: null, limitUse: null });
    const account = await s.store.updateAccount(key.accountId, { limits: { tpm: 500, maxConcurrent: 3 } });
    expect(account?.limits).toEqual({ tpm: 500, maxConcurrent: 3 });
    expect((await s.store.getAccount(key.accountId))?.limitUse).toEqual({
      tokens: { limit: 500, remaining: 500, resetMs: 0 },
      concurrent: { limit: 3, inFlight: 0 },
    });
  });

  it('writes nothing for limits when neither key nor account has any', async () => {
    const key = await limitedKey(null);
    const reserved = await s.store.reserve(reserveReq(key, 'r1'));
    expect(reserved).toEqual({ kind: 'reserved', allowance: 90, amount: 100 });
    await s.store.settle(settlement(key, 'r1', 50));
    if (s.redis) expect(await s.redis.keys(`${s.prefix}*:l[wtc]*`)).toEqual([]);
  });

  it('admits exactly rpm of many concurrent reservations', async () => {
    const key = await limitedKey({ rpm: 30 });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => s.store.reserve(reserveReq(key, `c${i}`))));
    expect(results.filter((r) => r.kind === 'reserved')).toHaveLength(30);
    expect((await s.store.getKey(key.id))?.reserved).toBe(30 * 100);
  });
});
