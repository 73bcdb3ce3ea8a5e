/**
 * What limits cost in Redis, watched with MONITOR: a request on a key and account without limits makes the same calls
 * as before limits existed (RESERVE and SETTLE, nothing touching a limit key); key and account limits add work inside
 * those scripts but no call; only a model with limits adds its own. Budgets likewise: none, no write; some, no call.
 */
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { chatBody, settled } from '../helpers/proxy';
import { startMonitor, type Monitor, type MonitoredCommand } from '../helpers/monitor';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';

describe('the cost of limits in Redis calls', () => {
  const t = proxyFixture('redis', { models: [{}, { id: 'acme/limited', limits: { rpm: 1_000 } }] });
  let watch: Monitor | undefined;
  /** The commands of the last request callsFor measured. */
  let last: MonitoredCommand[] = [];

  beforeAll(async () => {
    watch = await startMonitor(testRedisUrl());
  });
  afterAll(() => watch?.close());

  /** The proxy's calls (scripts or plain commands), and whether any command touched a limit window, for one request. */
  async function callsFor(secret: string, model?: string): Promise<{ calls: string[]; limitKeys: boolean }> {
    const post = () =>
      request(t.proxy.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${secret}`)
        .send(chatBody(model ? { model } : {}))
        .expect(200);
    await post(); // the key's lookup is cached from here on, and every script is loaded
    await settled(t.proxy);
    const seen = await watch!.during(async () => {
      await post();
      await settled(t.proxy);
    });
    // MONITOR sees every client of the shared test Redis: only this store's commands (their keys carry its prefix).
    const prefix = t.s.prefix as string;
    const during = seen.filter((c) => c.args.some((a) => a.includes(prefix)));
    last = during;
    return {
      calls: during.filter((c) => !c.lua).map((c) => (c.args[0].toLowerCase().startsWith('eval') ? 'script' : c.args[0].toLowerCase())),
      limitKeys: during.some((c) => c.args.some((a) => /:l[wtc](:|$)/.test(a))),
    };
  }

  it('adds no call and touches no limit key for a key and account without limits', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    expect(await callsFor(key.secret)).toEqual({ calls: ['script', 'script'], limitKeys: false });
  });

  it('checks key and account limits inside the same two scripts', async () => {
    const key = await keyWithTokens(t.s.store, 100_000, { limits: { rpm: 1_000 } });
    await t.s.store.updateAccount(key.accountId, { limits: { tpm: 1_000_000 } });
    expect(await callsFor(key.secret)).toEqual({ calls: ['script', 'script'], limitKeys: true });
  });

  /** Whether the last request wrote a budget's counters (bp, bs, bh). */
  const budgetWrites = () => last.some((c) => c.lua && /^(hset|hincrby)$/i.test(c.args[0]) && c.args.some((a) => /^b[psh]$/.test(a)));

  it('adds no call and writes no budget counter for a key and account without a budget', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    expect((await callsFor(key.secret)).calls).toEqual(['script', 'script']);
    expect(budgetWrites()).toBe(false);
  });

  it('checks and counts key and account budgets inside the same two scripts', async () => {
    const key = await keyWithTokens(t.s.store, 100_000, { budget: { tokens: 1_000_000, period: 'day' } });
    await t.s.store.updateAccount(key.accountId, { budget: { tokens: 1_000_000, period: 'month' } });
    expect((await callsFor(key.secret)).calls).toEqual(['script', 'script']);
    expect(budgetWrites()).toBe(true);
  });

  it("adds the model's own step only for a model with limits", async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    const { calls } = await callsFor(key.secret, 'acme/limited');
    expect(calls).toEqual(['script', 'script', 'script', 'script']);
  });
});
