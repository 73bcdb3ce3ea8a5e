/**
 * The quota under concurrency: 200 requests at once on one small balance, through two proxy instances sharing one
 * Redis (as two processes would), never charge more than was granted, and every request the balance covers is served.
 */
import request from 'supertest';
import { makeStore, keyWithTokens, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { startUpstream, streamReply, jsonReply, words, type TestUpstream, type Behaviour } from '../helpers/upstream';
import type { ChatRequest } from '../../src/requests/chat-request';
import { estimatePromptTokens, promptTokenBound } from '../../src/metering/estimate';
import { startProxy, settled, chatBody, type ProxyUnderTest } from '../helpers/proxy';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import Redis from 'ioredis';
import { testRedisUrl } from '../helpers/stores';

const GRANT = 1_000;

describe.each(storeKinds)('quota under concurrency (%s store)', (kind) => {
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxies: ProxyUnderTest[];
  let second: RedisStore | undefined;

  beforeEach(async () => {
    s = await makeStore(kind);
    // The upstream uses every token it is allowed (max_tokens), slowly enough that requests overlap.
    const slowFull: Behaviour = async (call, req, res) => {
      await new Promise((r) => setTimeout(r, 20));
      return call.body.stream ? streamReply({ tokens: words(1000) })(call, req, res) : jsonReply({ tokens: words(1000) })(call, req, res);
    };
    upstream = await startUpstream(slowFull);
    proxies = [await startProxy({ store: s.store, upstreamUrl: upstream.url })];
    if (kind === 'redis') {
      // A second proxy with its own connection, as a second process would have.
      second = new RedisStore(new Redis(testRedisUrl(), { ...redisClientOptions(2000), enableOfflineQueue: true }), { prefix: s.prefix });
      proxies.push(await startProxy({ store: second, upstreamUrl: upstream.url }));
    }
  });
  afterEach(async () => {
    for (const p of proxies) await p.close();
    await second?.close();
    await upstream.close();
    await s.close();
  });

  it('never charges more than the grant, and serves what the balance covers', async () => {
    const key = await keyWithTokens(s.store, GRANT);
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        request(proxies[i % proxies.length].url)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${key.secret}`)
          .send(chatBody({ max_tokens: 20, stream: i % 2 === 0 })),
      ),
    );
    for (const p of proxies) await settled(p);
    const statuses = results.map((r) => r.status);
    expect(statuses.every((st) => st === 200 || st === 429)).toBe(true);
    const served = statuses.filter((st) => st === 200).length;

    const ledger = await s.store.usage({ keyId: key.id, limit: 1000 });
    const charged = ledger.reduce((sum, r) => sum + r.chargedTokens, 0);
    const state = await s.store.getKey(key.id);
    expect(ledger).toHaveLength(served);
    expect(charged).toBeLessThanOrEqual(GRANT);
    expect(state).toMatchObject({ reserved: 0, debt: 0, balance: GRANT - charged });
    // Even if all requests had reserved at once, with the prompt's upper bound, the grant covers this many full ones.
    expect(served).toBeGreaterThanOrEqual(Math.floor(GRANT / (promptTokenBound(chatBody() as ChatRequest) + 20)));

    // Whatever balance is left and covers a request, a request gets served.
    const last = await request(proxies[0].url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(chatBody({ max_tokens: 20 }));
    // (A short balance is checked against the tokenizer's exact count, not the bound.)
    expect(last.status).toBe(state!.balance >= estimatePromptTokens(chatBody() as ChatRequest) + 1 ? 200 : 429);
  });
});
