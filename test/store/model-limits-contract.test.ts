/** The model level of the limits, one contract for both stores: the sliding window log, tpm corrections, slots. */
import { makeStore, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { AdmitResult, LimitCheck, Limits } from '../../src/limits/limits';

const MODEL = 'acme/limited';
/** Long enough that nothing leaves the window during a test, unless the test waits for it. */
const WINDOW_MS = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const check = (requestId: string, limits: Limits, over: Partial<LimitCheck> = {}): LimitCheck => ({
  requestId,
  limits,
  tokens: 10,
  leaseMs: 60_000,
  ...over,
});

function refusal(result: AdmitResult) {
  if (result.kind !== 'rate_limited') throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
  return result.refusal;
}

function use(result: AdmitResult) {
  if (result.kind !== 'admitted') throw new Error(`expected an admission, got ${JSON.stringify(result)}`);
  return result.use;
}

describe.each(storeKinds)('%s store: model limits', (kind) => {
  let s: StoreUnderTest;
  const start = async (windowMs = WINDOW_MS) => {
    s = await makeStore(kind, { limitWindowMs: windowMs });
  };
  afterEach(async () => {
    await s.close();
  });

  it('admits rpm requests in a window and refuses the next, with when a slot frees', async () => {
    await start();
    const limits = { rpm: 3 };
    for (let i = 0; i < 3; i++) expect(use(await s.store.admitModel(MODEL, check(`r${i}`, limits))).requests?.remaining).toBe(2 - i);
    const r = refusal(await s.store.admitModel(MODEL, check('r3', limits)));
    expect(r).toMatchObject({ level: 'model', kind: 'requests', limit: 3, used: 3, tooLarge: false });
    expect(r.retryAfterMs).toBeGreaterThan(WINDOW_MS - 5_000);
    expect(r.retryAfterMs).toBeLessThanOrEqual(WINDOW_MS);
    expect(r.use.requests).toMatchObject({ limit: 3, remaining: 0 });
    // The refusal changed nothing, and the same request admitted again is not a second request.
    expect((await s.store.modelUse(MODEL, limits)).requests?.remaining).toBe(0);
    expect((await s.store.admitModel(MODEL, check('r1', limits))).kind).toBe('admitted');
  });

  it('slides: a request leaves the window one window after it was admitted, not at a fixed edge', async () => {
    await start(1_000);
    const limits = { rpm: 2 };
    await s.store.admitModel(MODEL, check('a', limits));
    await sleep(500);
    await s.store.admitModel(MODEL, check('b', limits));
    expect((await s.store.admitModel(MODEL, check('c', limits))).kind).toBe('rate_limited');
    // Once `a` has left, exactly one more fits; `b` is still in the window.
    await sleep(600);
    expect((await s.store.admitModel(MODEL, check('c', limits))).kind).toBe('admitted');
    expect((await s.store.admitModel(MODEL, check('d', limits))).kind).toBe('rate_limited');
  });

  it('counts tokens against tpm and says when enough will have left the window', async () => {
    await start();
    const limits = { tpm: 100 };
    expect(use(await s.store.admitModel(MODEL, check('a', limits, { tokens: 60 }))).tokens).toMatchObject({ limit: 100, remaining: 40 });
    const r = refusal(await s.store.admitModel(MODEL, check('b', limits, { tokens: 50 })));
    expect(r).toMatchObject({ kind: 'tokens', limit: 100, used: 60, requested: 50, tooLarge: false });
    expect(r.retryAfterMs).toBeGreaterThan(0);
    expect(r.retryAfterMs).toBeLessThanOrEqual(WINDOW_MS);
    expect((await s.store.admitModel(MODEL, check('b', limits, { tokens: 40 }))).kind).toBe('admitted');
  });

  it('refuses a request larger than the tpm limit as too large', async () => {
    await start();
    const r = refusal(await s.store.admitModel(MODEL, check('a', { tpm: 100 }, { tokens: 101 })));
    expect(r).toMatchObject({ kind: 'tokens', tooLarge: true, requested: 101 });
  });

  it('corrects tpm to the charged tokens at settlement, to 0 on release, and forgets an undone request', async () => {
    await start();
    const limits = { rpm: 10, tpm: 1000 };
    await s.store.admitModel(MODEL, check('settled', limits, { tokens: 500 }));
    await s.store.admitModel(MODEL, check('released', limits, { tokens: 300 }));
    await s.store.admitModel(MODEL, check('undone', limits, { tokens: 100 }));
    expect((await s.store.modelUse(MODEL, limits)).tokens?.remaining).toBe(100);
    await s.store.endModel(MODEL, 'settled', { kind: 'settle', tokens: 120 });
    expect((await s.store.modelUse(MODEL, limits)).tokens?.remaining).toBe(480);
    await s.store.endModel(MODEL, 'released', { kind: 'release' });
    expect(await s.store.modelUse(MODEL, limits)).toMatchObject({ tokens: { remaining: 780 }, requests: { remaining: 7 } });
    await s.store.endModel(MODEL, 'undone', { kind: 'undo' });
    // Settled and released requests still count as requests; the undone one never happened.
    expect(await s.store.modelUse(MODEL, limits)).toMatchObject({ tokens: { remaining: 880 }, requests: { remaining: 8 } });
    // Ending twice changes nothing more.
    await s.store.endModel(MODEL, 'undone', { kind: 'undo' });
    await s.store.endModel(MODEL, 'released', { kind: 'release' });
    expect(await s.store.modelUse(MODEL, limits)).toMatchObject({ tokens: { remaining: 880 }, requests: { remaining: 8 } });
  });

  it('holds max_concurrent slots until each request ends', async () => {
    await start();
    const limits = { maxConcurrent: 2 };
    await s.store.admitModel(MODEL, check('a', limits));
    expect(use(await s.store.admitModel(MODEL, check('b', limits))).concurrent).toEqual({ limit: 2, inFlight: 2 });
    expect(refusal(await s.store.admitModel(MODEL, check('c', limits)))).toMatchObject({ kind: 'concurrent', limit: 2, used: 2 });
    await s.store.endModel(MODEL, 'a', { kind: 'settle', tokens: 5 });
    expect((await s.store.admitModel(MODEL, check('c', limits))).kind).toBe('admitted');
  });

  it('frees a slot whose lease lapsed (a crashed proxy), unless it was renewed', async () => {
    await start();
    const limits = { maxConcurrent: 2 };
    await s.store.admitModel(MODEL, check('crashed', limits, { leaseMs: 100 }));
    await s.store.admitModel(MODEL, check('alive', limits, { leaseMs: 100 }));
    await sleep(60);
    await s.store.renewModel(MODEL, 'alive', 60_000);
    await sleep(80);
    expect((await s.store.modelUse(MODEL, limits)).concurrent).toEqual({ limit: 2, inFlight: 1 });
    expect((await s.store.admitModel(MODEL, check('next', limits))).kind).toBe('admitted');
    expect((await s.store.admitModel(MODEL, check('over', limits))).kind).toBe('rate_limited');
  });

  it('reports when the window will be empty again', async () => {
    await start();
    const limits = { rpm: 5, tpm: 100 };
    expect(await s.store.modelUse(MODEL, limits)).toEqual({
      requests: { limit: 5, remaining: 5, resetMs: 0 },
      tokens: { limit: 100, remaining: 100, resetMs: 0 },
    });
    const u = use(await s.store.admitModel(MODEL, check('a', limits)));
    expect(u.requests?.resetMs).toBeGreaterThan(WINDOW_MS - 5_000);
    expect(u.requests?.resetMs).toBeLessThanOrEqual(WINDOW_MS);
    expect(u.tokens?.resetMs).toBe(u.requests?.resetMs);
  });

  it('keeps models apart', async () => {
    await start();
    await s.store.admitModel(MODEL, check('a', { rpm: 1 }));
    expect((await s.store.admitModel('acme/other', check('a', { rpm: 1 }))).kind).toBe('admitted');
  });

  it('admits exactly rpm of many concurrent requests', async () => {
    await start();
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => s.store.admitModel(MODEL, check(`c${i}`, { rpm: 30 }))));
    expect(results.filter((r) => r.kind === 'admitted')).toHaveLength(30);
  });
});
