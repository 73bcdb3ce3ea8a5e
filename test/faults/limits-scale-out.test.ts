/**
 * Limits across processes: two proxy processes on one Redis, then on a three-master Redis Cluster. A limit admits
 * exactly its count however the requests are spread, and a budget exactly what fits, max_concurrent holds at the
 * upstream, and a proxy killed with kill -9 mid-stream frees its slots once their leases lapse.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { Cluster } from 'ioredis';
import request from 'supertest';
import { RedisStore } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody, MODEL, UPSTREAM_MODEL } from '../helpers/proxy';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { jsonReply, startUpstream, streamReply, words, type TestUpstream } from '../helpers/upstream';
import type { ChatRequest } from '../../src/requests/chat-request';
import { promptTokenBound } from '../../src/metering/estimate';

jest.setTimeout(60_000);

const NARROW = 'acme/narrow';
const FREE = 'acme/free';

type Level = 'model' | 'key' | 'account';
const LEVELS: Level[] = ['model', 'key', 'account'];

describe.each([
  ['one Redis', false],
  ['a three-master Redis Cluster', true],
])('limits across two proxy processes on %s', (_name, cluster) => {
  let upstream: TestUpstream;
  let redisCluster: RedisCluster | undefined;
  let store: RedisStore;
  let env: Record<string, string>;
  let proxies: ProxyProcess[];

  const start = (over: Record<string, string> = {}) =>
    startProxyProcess({ ...env, JOURNAL_FILE: join(mkdtempSync(join(tmpdir(), 'tm-limits-')), 'journal'), ...over });
  const post = (proxy: ProxyProcess, secret: string, body: object) =>
    request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(body);

  beforeAll(async () => {
    upstream = await startUpstream();
    redisCluster = cluster ? await startRedisCluster() : undefined;
    const url = redisCluster?.url ?? testRedisUrl();
    const prefix = `lim${Math.random().toString(36).slice(2, 8)}:`;
    store = new RedisStore(cluster ? new Cluster([url]) : new Redis(url), { prefix });
    const base = { context_length: 8192, max_output_tokens: 1024 };
    env = {
      REDIS_URL: url,
      REDIS_CLUSTER: String(cluster),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      // A short lease, so a killed proxy's slots lapse within the test (renewed every third of it while alive).
      RESERVATION_LEASE_SECONDS: '1',
      MODELS_FILE: writeModelsFile([
        { id: MODEL, upstream_model: UPSTREAM_MODEL, ...base, limits: { rpm: 30 } },
        { id: NARROW, ...base, limits: { max_concurrent: 4 } },
        { id: FREE, ...base },
      ]),
    };
    proxies = [await start(), await start()];
  });
  /**
   * Secrets to send requests with, and the model to ask for, so that exactly one level carries `limits`: the model's
   * own (from the models file), one key's, or an account's shared by two keys (requests alternate between them).
   */
  async function limitedOn(level: Level, limits: { rpm?: number; maxConcurrent?: number }): Promise<{ secrets: string[]; model: string }> {
    if (level === 'model') {
      const key = await keyWithTokens(store, 1_000_000);
      return { secrets: [key.secret], model: limits.rpm ? MODEL : NARROW };
    }
    if (level === 'key') return { secrets: [(await keyWithTokens(store, 1_000_000, { limits })).secret], model: FREE };
    const first = await keyWithTokens(store, 1_000_000);
    const second = await keyWithTokens(store, 0, { accountId: first.accountId });
    await store.updateAccount(first.accountId, { limits });
    return { secrets: [first.secret, second.secret], model: FREE };
  }

  afterAll(async () => {
    for (const p of proxies ?? []) await p.stop('SIGKILL');
    await store?.close();
    await redisCluster?.stop();
    await upstream?.close();
  });

  it.each(LEVELS)('admits exactly rpm of 200 requests fired at once through both (%s level)', async (level) => {
    const { secrets, model } = await limitedOn(level, { rpm: 30 });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        post(proxies[i % 2], secrets[i % secrets.length], chatBody({ model, max_tokens: 5, stream: i % 3 === 0 })),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(30);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused.every((r) => r.status === 429 && r.body.error.code === 'rate_limit_exceeded')).toBe(true);
    expect(refused.every((r) => r.body.error.message.includes(`on this ${level}`))).toBe(true);
  });

  it.each([
    ['key', 'day'],
    ['account', 'month'],
  ] as const)("admits exactly what fits a %s's budget per %s of 200 requests fired at once through both", async (level, period) => {
    // Usage equal to each reservation (the prompt's byte bound and 5 tokens): settling frees nothing, so what fits is exact.
    const charge = promptTokenBound(chatBody() as unknown as ChatRequest) + 5;
    upstream.behave(jsonReply({ promptTokens: charge - 5 }));
    const budget = { tokens: 30 * charge, period };
    const first = await keyWithTokens(store, 1_000_000, level === 'key' ? { budget } : {});
    const second = await keyWithTokens(store, 0, { accountId: first.accountId });
    if (level === 'account') await store.updateAccount(first.accountId, { budget });
    const secrets = level === 'key' ? [first.secret] : [first.secret, second.secret];
    // Leases long enough that none lapses under this load (a lapsed one gives back its hold, as a crashed proxy's must),
    // and store calls that may wait (a refusal reserves twice: the byte bound, then the exact count).
    const patient = { RESERVATION_LEASE_SECONDS: '60', STORE_TIMEOUT_MS: '10000' };
    const pair = [await start(patient), await start(patient)];
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => post(pair[i % 2], secrets[i % secrets.length], chatBody({ model: FREE, max_tokens: 5 }))),
    ).finally(() => Promise.all(pair.map((p) => p.stop())));
    expect(results.filter((r) => r.status === 200)).toHaveLength(30);
    // Every other one refused by the budget (the set, so a failure shows what else came).
    expect([...new Set(results.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.error?.code}`))]).toEqual([
      '429 budget_exceeded',
    ]);
    // The proxies settle after answering: wait for the ledger, then read the budget.
    await eventually(async () => expect((await store.getAccount(first.accountId))?.usage.requests).toBe(30));
    expect((level === 'key' ? await store.getKey(first.id) : await store.getAccount(first.accountId))?.budget).toMatchObject({
      spent: 30 * charge,
      reserved: 0,
    });
  });

  it.each(LEVELS)('never has more than max_concurrent streams at the upstream, of 50 at once (%s level)', async (level) => {
    const { secrets, model } = await limitedOn(level, { maxConcurrent: 4 });
    let inFlight = 0;
    let most = 0;
    upstream.behave(async (call, req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Counted out when its last byte leaves (finish), before the proxy can see the end and free the slot.
      res.once('finish', () => inFlight--);
      await streamReply({ tokens: words(10), delayMs: 20 })(call, req, res);
    });
    const before = upstream.calls.length;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        post(proxies[i % 2], secrets[i % secrets.length], chatBody({ model, stream: true, max_tokens: 20 })),
      ),
    );
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(4);
    expect(upstream.calls.slice(before).filter((c) => c.body.model === model)).toHaveLength(admitted);
    expect(most).toBeLessThanOrEqual(4);
    expect(results.filter((r) => r.status !== 200).every((r) => r.body.error?.message.startsWith('Concurrency limit reached'))).toBe(true);
  });

  it.each(LEVELS)('frees the slots of a proxy killed mid-stream once their leases lapse (%s level)', async (level) => {
    const { secrets, model } = await limitedOn(level, { maxConcurrent: 4 });
    upstream.behave(streamReply({ tokens: words(1000), delayMs: 50 }));
    const body = chatBody({ model, stream: true, max_tokens: 1000 });
    const before = upstream.calls.length;
    // Four streams through the first proxy take every slot; the second proxy is refused while they run.
    const streams = Array.from({ length: 4 }, (_, i) =>
      post(proxies[0], secrets[i % secrets.length], body).then(
        (r) => r,
        (e: unknown) => e,
      ),
    );
    await eventually(async () => expect(upstream.calls.length - before).toBe(4));
    expect((await post(proxies[1], secrets[0], body)).status).toBe(429);
    await proxies[0].stop('SIGKILL');
    await Promise.all(streams);
    // Nobody frees those slots but their leases: once they lapse, the other proxy is admitted again.
    upstream.behave(streamReply({ tokens: words(2) }));
    await eventually(async () => expect((await post(proxies[1], secrets[0], body)).status).toBe(200), 10_000);
    proxies[0] = await start();
  });
});
