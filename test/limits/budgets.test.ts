/**
 * Budgets through the proxy, on two proxies sharing one Redis and then a three-master Redis Cluster (as two processes
 * would): exactly what fits the period is admitted, the rest refused with a 429 `budget_exceeded` that says when the
 * budget resets and that the SDKs must not retry, and the next UTC period admits again. The proxies' store clock is
 * the test's, moved across the period's end rather than waited for.
 */
import Redis, { Cluster } from 'ioredis';
import request from 'supertest';
import type { BudgetPeriod } from '../../src/limits/budget';
import type { ChatRequest } from '../../src/requests/chat-request';
import { promptTokenBound } from '../../src/metering/estimate';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import { chatBody, settled, startProxy, type ProxyUnderTest } from '../helpers/proxy';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { jsonReply, startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(60_000);

const BODY = chatBody({ max_tokens: 5 });
/** What each request reserves (the prompt's byte bound and 5 completion tokens) and, answered below, is charged. */
const CHARGE = promptTokenBound(BODY as unknown as ChatRequest) + 5;

/** Usage equal to the reservation, so a settlement frees nothing and what fits is exact however requests interleave. */
const chargeExactly = jsonReply({ promptTokens: CHARGE - 5 });

describe.each([
  ['one Redis', false],
  ['a three-master Redis Cluster', true],
])('budgets across two proxies on %s', (_name, cluster) => {
  let upstream: TestUpstream;
  let redisCluster: RedisCluster | undefined;
  let stores: RedisStore[];
  let proxies: ProxyUnderTest[];
  /** Both proxies' store clock. */
  const clock = { ms: 0 };

  beforeAll(async () => {
    upstream = await startUpstream(chargeExactly);
    redisCluster = cluster ? await startRedisCluster() : undefined;
    const url = redisCluster?.url ?? testRedisUrl();
    const prefix = `bud${Math.random().toString(36).slice(2, 8)}:`;
    // One connection each, as two processes would have.
    const options = { ...redisClientOptions(2000), enableOfflineQueue: true };
    const client = () => (cluster ? new Cluster([url], { redisOptions: options, enableOfflineQueue: true }) : new Redis(url, options));
    stores = [0, 1].map(() => new RedisStore(client(), { prefix, now: () => clock.ms }));
    proxies = [];
    for (const store of stores) proxies.push(await startProxy({ store, upstreamUrl: upstream.url }));
  });
  afterAll(async () => {
    for (const p of proxies ?? []) await p.close();
    for (const s of stores ?? []) await s.close();
    await redisCluster?.stop();
    await upstream?.close();
  });

  const post = (i: number, secret: string) =>
    request(proxies[i % 2].url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${secret}`)
      .send(BODY);

  /** Sends requests one after another, alternating proxies, until one is refused; the admitted ones and the refusal. */
  async function spend(secret: string): Promise<{ admitted: number; refusal: request.Response }> {
    for (let i = 0; i < 20; i++) {
      const r = await post(i, secret);
      if (r.status !== 200) return { admitted: i, refusal: r };
    }
    throw new Error('the budget never refused');
  }

  const cases: ['key' | 'account', BudgetPeriod, string, string][] = [
    ['key', 'day', '2025-01-15T23:30:00Z', '2025-01-16T00:00:00Z'],
    ['account', 'day', '2025-01-15T23:30:00Z', '2025-01-16T00:00:00Z'],
    ['key', 'week', '2025-01-19T23:30:00Z', '2025-01-20T00:00:00Z'],
    ['account', 'month', '2025-01-31T23:30:00Z', '2025-02-01T00:00:00Z'],
  ];
  it.each(cases)(
    'a budget on the %s per %s admits what fits at %s, refuses the rest, and admits again from %s',
    async (level, period, before, next) => {
      clock.ms = Date.parse(before);
      const key = await keyWithTokens(stores[0], 1_000_000, level === 'key' ? { budget: { tokens: 3 * CHARGE, period } } : {});
      if (level === 'account') await stores[0].updateAccount(key.accountId, { budget: { tokens: 3 * CHARGE, period } });

      const first = await spend(key.secret);
      expect(first.admitted).toBe(3);
      expect(first.refusal.status).toBe(429);
      expect(first.refusal.headers['x-should-retry']).toBe('false');
      expect(first.refusal.headers['x-budget-reset']).toBe(next.replace('.000Z', 'Z'));
      expect(first.refusal.body.error).toMatchObject({ code: 'budget_exceeded', type: 'insufficient_quota', param: null });
      expect(first.refusal.body.error.message).toContain(`This ${level}'s`);
      expect(first.refusal.body.error.message).toContain(`resets at ${next}`);

      clock.ms = Date.parse(next);
      const second = await spend(key.secret);
      expect(second.admitted).toBe(3);
      expect(second.refusal.body.error.code).toBe('budget_exceeded');

      for (const p of proxies) await settled(p);
      const state = level === 'key' ? await stores[1].getKey(key.id) : await stores[1].getAccount(key.accountId);
      expect(state?.budget).toMatchObject({ tokens: 3 * CHARGE, period, spent: 3 * CHARGE, reserved: 0 });
      expect(state?.usage.chargedTokens).toBe(6 * CHARGE);
    },
  );
});
