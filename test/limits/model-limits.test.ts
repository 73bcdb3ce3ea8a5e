/**
 * A model's limits through the proxy: a refusal is OpenAI's retryable 429 with its headers, reaches no upstream and
 * charges nothing; every admitted answer carries the x-ratelimit-* headers; tpm is corrected at settlement.
 */
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { chatBody, MODEL, settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { jsonReply, streamReply, words } from '../helpers/upstream';

/** OpenAI's duration format (Go's): 120ms, 1s, 1.5s, 6m0s, 1h0m0s. */
const DURATION = /^(\d+ms|(\d+h)?(\d+m)?\d+(\.\d+)?s)$/;

describe.each(storeKinds)('model limits through the proxy (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    models: [
      { limits: { rpm: 2, tpm: 5_000 } },
      { id: 'acme/narrow', limits: { max_concurrent: 2 } },
      { id: 'acme/free' },
      { id: 'acme/tight', limits: { tpm: 200 } },
    ],
  });
  const post = (secret: string, body: object) =>
    request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(body);

  it('refuses past rpm with a retryable 429 naming limit and level, forwards nothing and charges nothing', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    await post(key.secret, chatBody()).expect(200);
    await post(key.secret, chatBody()).expect(200);
    const refused = await post(key.secret, chatBody());
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      message: expect.stringMatching(/^Rate limit reached for requests per minute on this model: limit 2, used 2\. Please try again in /),
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    });
    const retryMs = Number(refused.headers['retry-after-ms']);
    expect(retryMs).toBeGreaterThan(0);
    expect(retryMs).toBeLessThanOrEqual(60_000);
    expect(refused.headers['retry-after']).toBe(String(Math.ceil(retryMs / 1000)));
    // The SDKs retry a 429 unless told not to: a rate limit must not tell them so.
    expect(refused.headers['x-should-retry']).toBeUndefined();
    expect(refused.headers['x-ratelimit-limit-requests']).toBe('2');
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(t.upstream.calls).toHaveLength(2);
    await settled(t.proxy);
    expect(await t.s.store.usage({ keyId: key.id, limit: 10 })).toHaveLength(2);
    const state = await t.s.store.getKey(key.id);
    expect(state?.reserved).toBe(0);
    expect(state?.usage.requests).toBe(2);
    const metrics = (await request(t.proxy.url).get('/metrics')).text;
    expect(metrics).toContain('tokenmeter_rate_limited_total{level="model",limit="requests"} 1');
    expect(metrics).toContain('tokenmeter_refusals_total{reason="rate_limit_exceeded"} 1');
  });

  it("carries OpenAI's x-ratelimit-* headers on an admitted answer, in OpenAI's formats", async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    const res = await post(key.secret, chatBody({ max_tokens: 100 })).expect(200);
    expect(res.headers['x-ratelimit-limit-requests']).toBe('2');
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('1');
    expect(res.headers['x-ratelimit-reset-requests']).toMatch(DURATION);
    expect(res.headers['x-ratelimit-limit-tokens']).toBe('5000');
    const remaining = Number(res.headers['x-ratelimit-remaining-tokens']);
    expect(remaining).toBeLessThanOrEqual(5_000 - 100);
    expect(res.headers['x-ratelimit-reset-tokens']).toMatch(DURATION);
    // A stream carries them too, with its first bytes.
    const stream = await post(key.secret, chatBody({ stream: true })).expect(200);
    expect(stream.headers['content-type']).toContain('text/event-stream');
    expect(stream.headers['x-ratelimit-remaining-requests']).toBe('0');
    // A model without limits: no headers, and its answers are untouched by any of this.
    const free = await post(key.secret, chatBody({ model: 'acme/free' })).expect(200);
    expect(Object.keys(free.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
  });

  it("passes on none of the upstream's own rate-limit headers: they describe the proxy's account, not the client's", async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    t.upstream.behave((call, req, res) => {
      res.setHeader('x-ratelimit-remaining-requests', '9999');
      res.setHeader('x-ratelimit-limit-tokens', '1');
      jsonReply()(call, req, res);
    });
    const limited = await post(key.secret, chatBody()).expect(200);
    expect(limited.headers['x-ratelimit-remaining-requests']).toBe('1');
    expect(limited.headers['x-ratelimit-limit-tokens']).toBe('5000');
    const free = await post(key.secret, chatBody({ model: 'acme/free' })).expect(200);
    expect(free.headers['x-ratelimit-remaining-requests']).toBeUndefined();
  });

  it('counts the reservation against tpm at admission and corrects it to the charged tokens at settlement', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    let finish!: () => void;
    t.upstream.behave(streamReply({ tokens: words(3), holdAfterFirst: new Promise<void>((r) => (finish = r)) }));
    const stream = post(key.secret, chatBody({ stream: true, max_tokens: 400 })).then((r) => r);
    const limits = { tpm: 5_000 };
    // While it runs, the model counts the whole reservation: prompt plus the 400 tokens it may produce.
    await waitFor(async () => ((await t.s.store.modelUse(MODEL, limits)).tokens?.remaining ?? 5_000) < 5_000 - 400);
    finish();
    expect((await stream).status).toBe(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    await waitFor(async () => (await t.s.store.modelUse(MODEL, limits)).tokens?.remaining === 5_000 - record.chargedTokens);
  });

  it("lowers a default max_tokens to what the model's tpm admits", async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    await post(key.secret, chatBody({ model: 'acme/tight' })).expect(200);
    const sent = t.upstream.calls[0].body.max_tokens as number;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(200);
  });

  it('refuses past max_concurrent and admits again once a request finishes', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    let finish!: () => void;
    const hold = new Promise<void>((r) => (finish = r));
    t.upstream.behave(streamReply({ holdAfterFirst: hold }));
    const body = chatBody({ model: 'acme/narrow', stream: true });
    const running = [post(key.secret, body).then((r) => r), post(key.secret, body).then((r) => r)];
    await waitFor(async () => t.upstream.calls.length === 2);
    const refused = await post(key.secret, body);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toBe(
      'Concurrency limit reached on this model: limit 2 requests in flight. Please try again when one finishes.',
    );
    expect(t.upstream.calls).toHaveLength(2);
    finish();
    for (const r of await Promise.all(running)) expect(r.status).toBe(200);
    await waitFor(async () => (await t.s.store.modelUse('acme/narrow', { maxConcurrent: 2 })).concurrent?.inFlight === 0);
    await post(key.secret, body).expect(200);
  });

  it('undoes the model admission when the reservation is refused', async () => {
    const broke = await keyWithTokens(t.s.store, 0);
    const refused = await post(broke.secret, chatBody());
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('insufficient_quota');
    expect(refused.headers['x-should-retry']).toBe('false');
    expect((await t.s.store.modelUse(MODEL, { rpm: 2 })).requests?.remaining).toBe(2);
    expect(t.upstream.calls).toHaveLength(0);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
