/**
 * A replica dies (SIGKILL, in its own process) under load of JSON and streams: requests not yet answered go to the
 * other replica, only streams already under way on it end early (charged for what was sent), and the official openai
 * SDK sees no retryable error while a replica restarts. One ledger record per client request throughout.
 */
import request from 'supertest';
import OpenAI from 'openai';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { startProxy, settled, chatBody, MODEL, type ProxyUnderTest } from '../helpers/proxy';
import { startReplica, type Replica } from '../helpers/pool';
import { claimPort } from '../helpers/ports';
import { eventually } from '../helpers/eventually';

describe('replicas dying under load (redis store)', () => {
  let s: StoreUnderTest;
  let replicas: Replica[] = [];
  let proxy: ProxyUnderTest | undefined;
  let key: { id: string; secret: string };

  beforeEach(async () => {
    s = await makeStore('redis');
    key = await keyWithTokens(s.store, 1_000_000);
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    for (const r of replicas) await r.kill();
    replicas = [];
    await s.close();
  });

  async function poolOf(urls: string[]): Promise<ProxyUnderTest> {
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: urls[0],
      upstreams: [{ name: 'replicas', servers: urls.map((url) => ({ url })), health_interval: 0.1 }],
      models: [{ upstream: 'replicas' }],
    });
    return proxy;
  }

  /** One record per request id, and the answers that completed charged at what the replica reported (9 + 5). */
  async function ledgerHolds(requests: number, completeIds: string[]): Promise<void> {
    await settled(proxy as ProxyUnderTest);
    const records = await s.store.usage({ keyId: key.id, limit: 1000 });
    expect(records).toHaveLength(requests);
    expect(new Set(records.map((r) => r.requestId)).size).toBe(requests);
    const complete = new Set(completeIds);
    for (const r of records.filter((x) => complete.has(x.requestId))) {
      expect([r.promptTokens, r.completionTokens, r.estimated]).toEqual([9, 5, false]);
    }
    expect((await s.store.getKey(key.id))?.reserved).toBe(0);
  }

  it('answers every JSON request and every stream not under way on a replica killed under load', async () => {
    replicas = [await startReplica(0, 300), await startReplica(0, 300)];
    await poolOf(replicas.map((r) => r.url));
    const post = (stream: boolean) =>
      request(proxy!.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody({ stream }));
    const first = Array.from({ length: 24 }, (_, i) => post(i % 2 === 1));
    await new Promise((r) => setTimeout(r, 150));
    await replicas[0].kill();
    const after = Array.from({ length: 12 }, (_, i) => post(i % 2 === 1));
    const results = await Promise.all([...first, ...after]);
    const completeIds: string[] = [];
    results.forEach((res, i) => {
      expect(res.status).toBe(200);
      const stream = i % 2 === 1;
      const ok = stream ? res.text.includes('data: [DONE]') && !res.text.includes('"error"') : res.body.choices?.length === 1;
      if (ok) completeIds.push(String(res.headers['x-request-id']));
      else {
        // Only a stream can break, and only one of the first wave (under way when the replica died).
        expect(stream && i < first.length).toBe(true);
        expect(res.text).toContain('"code":"upstream_error"');
      }
    });
    await ledgerHolds(results.length, completeIds);
  });

  it('shows the openai SDK no retryable error while a replica restarts under load', async () => {
    // The first is restarted on its port: a claimed one, which nothing else can take while it is down.
    replicas = [await startReplica(await claimPort(), 40), await startReplica(0, 40)];
    await poolOf(replicas.map((r) => r.url));
    const retryable: number[] = [];
    const client = new OpenAI({
      apiKey: key.secret,
      baseURL: proxy!.baseURL,
      // Sees every answer the SDK gets, before its own retries could hide one.
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if (res.status === 429 || res.status >= 500) retryable.push(res.status);
        return res;
      },
    });
    let running = true;
    let done = 0;
    const worker = async () => {
      while (running) {
        const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }] });
        expect(answer.choices[0].message.content).toBe('w0 w1 w2 w3 w4 ');
        done++;
      }
    };
    const workers = [worker(), worker(), worker(), worker()];
    // Load before, while the replica is down, and after it is back: each stretch ends only once requests completed in it.
    const passes = async (ms: number) => {
      const before = done;
      await new Promise((r) => setTimeout(r, ms));
      await eventually(async () => expect(done).toBeGreaterThan(before + 3));
    };
    await passes(200);
    const port = replicas[0].port;
    await replicas[0].kill();
    await passes(300);
    replicas[0] = await startReplica(port, 40);
    await passes(400);
    running = false;
    await Promise.all(workers);
    expect(retryable).toEqual([]);
    await settled(proxy as ProxyUnderTest);
    expect(await s.store.usage({ keyId: key.id, limit: 10_000 })).toHaveLength(done);
  });
});
