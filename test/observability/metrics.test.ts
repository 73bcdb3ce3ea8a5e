/** Metrics agree with the ledger; labels stay bounded; logs never carry the key; request ids are kept or made. */
import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { keyWithTokens } from '../helpers/stores';
import { startProxy, settled, chatBody, MODEL } from '../helpers/proxy';
import { startProxyProcess } from '../helpers/processes';
import { writeModelsFile } from '../helpers/models-file';
import { proxyFixture } from '../helpers/fixture';
import { eventually } from '../helpers/eventually';
import { streamReply } from '../helpers/upstream';

/** The value of one sample in Prometheus text format, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const have = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[2]);
  }
  return undefined;
}

describe('metrics and logs (redis store)', () => {
  const t = proxyFixture('redis', { env: { METRICS_PER_KEY: 'true' } });

  it('counts exactly the tokens the ledger recorded, after JSON and stream requests', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    const post = (body: object) =>
      request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(body);
    await post(chatBody()).expect(200);
    await post(chatBody({ stream: true })).expect(200);
    await post(chatBody({ stream: true, max_tokens: 2 })).expect(200);
    await request(t.proxy.url).post('/v1/chat/completions').set('authorization', 'Bearer sk-nope').send(chatBody()).expect(401);
    await post(chatBody({ model: 'client/made-up-model' })).expect(404);
    await settled(t.proxy);

    const text = (await request(t.proxy.url).get('/metrics')).text;
    if (process.env.METRICS_DUMP) writeFileSync(process.env.METRICS_DUMP, text); // for `promtool check metrics` in CI
    const ledger = await t.s.store.usage({ keyId: key.id, limit: 100 });
    const sum = (f: (r: (typeof ledger)[number]) => number) => ledger.reduce((a, r) => a + f(r), 0);
    expect(ledger).toHaveLength(3);
    expect(sample(text, 'tokenmeter_tokens_total', { model: MODEL, kind: 'prompt', source: 'upstream' })).toBe(sum((r) => r.promptTokens));
    expect(sample(text, 'tokenmeter_tokens_total', { model: MODEL, kind: 'completion', source: 'upstream' })).toBe(
      sum((r) => r.completionTokens),
    );
    expect(sample(text, 'tokenmeter_charged_tokens_total', { model: MODEL })).toBe(sum((r) => r.chargedTokens));
    expect(sample(text, 'tokenmeter_key_charged_tokens_total', { key_id: key.id, model: MODEL })).toBe(sum((r) => r.chargedTokens));
    expect(sample(text, 'tokenmeter_requests_total', { model: MODEL, status: '200', stream: 'false' })).toBe(1);
    expect(sample(text, 'tokenmeter_requests_total', { model: MODEL, status: '200', stream: 'true' })).toBe(2);
    expect(sample(text, 'tokenmeter_refusals_total', { reason: 'invalid_api_key' })).toBe(1);
    expect(sample(text, 'tokenmeter_refusals_total', { reason: 'model_not_found' })).toBe(1);
    expect(sample(text, 'tokenmeter_time_to_first_token_seconds_count', { model: MODEL })).toBe(2);
    expect(sample(text, 'tokenmeter_store_duration_seconds_count', { op: 'settle' })).toBe(3);
    expect(sample(text, 'tokenmeter_active_streams')).toBe(0);
    expect(sample(text, 'tokenmeter_settle_backlog')).toBe(0);
    // A model name a client made up never becomes a label value.
    expect(text).not.toContain('client/made-up-model');
    expect(sample(text, 'tokenmeter_requests_total', { model: 'unknown', status: '404' })).toBe(1);
  });

  it("observes a stream's time to first token as its first event leaves, not when the stream ends", async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    let release: () => void = () => {};
    t.upstream.behave(streamReply({ holdAfterFirst: new Promise<void>((r) => (release = r)) }));
    const observed = async () =>
      sample((await request(t.proxy.url).get('/metrics')).text, 'tokenmeter_time_to_first_token_seconds_count', { model: MODEL }) ?? 0;
    const before = await observed();
    const stream = request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(chatBody({ stream: true }))
      .then((r) => r);
    // The upstream holds the rest of the stream: the first event alone has reached the client.
    await eventually(async () => expect(await observed()).toBe(before + 1), 10_000, 'the time to first token observed mid-stream');
    release();
    expect((await stream).status).toBe(200);
    await settled(t.proxy);
    expect(await observed()).toBe(before + 1);
  });

  it('labels requests, tokens and the log line with their endpoint, as the ledger records it', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    const post = (path: string, body: object) => request(t.proxy.url).post(path).set('authorization', `Bearer ${key.secret}`).send(body);
    await post('/v1/chat/completions', chatBody()).expect(200);
    await post('/v1/completions', { model: MODEL, prompt: 'Once' }).expect(200);
    await post('/v1/responses', { model: MODEL, input: 'Hi', stream: true }).expect(200);
    await post('/v1/embeddings', { model: MODEL, input: 'x' }).expect(400);
    await settled(t.proxy);

    const text = (await request(t.proxy.url).get('/metrics')).text;
    for (const endpoint of ['chat', 'completions', 'responses']) {
      expect(sample(text, 'tokenmeter_requests_total', { endpoint, status: '200' })).toBe(1);
      const [record] = (await t.s.store.usage({ keyId: key.id, limit: 10 })).filter((r) => r.endpoint === endpoint);
      expect(sample(text, 'tokenmeter_charged_tokens_total', { model: MODEL, endpoint })).toBe(record.chargedTokens);
      expect(sample(text, 'tokenmeter_tokens_total', { endpoint, kind: 'prompt' })).toBe(record.promptTokens);
    }
    expect(sample(text, 'tokenmeter_requests_total', { endpoint: 'embeddings', status: '400' })).toBe(1);
    const log = t.proxy.logs.map((l) => JSON.parse(l)).find((l) => l.path === '/v1/completions');
    expect(log).toMatchObject({ endpoint: 'completions', status: 200 });
  });

  it('counts upstream errors by kind', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    t.upstream.behave((_c, _r, res) => {
      res.writeHead(500).end('boom');
    });
    await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody()).expect(500);
    const text = (await request(t.proxy.url).get('/metrics')).text;
    expect(sample(text, 'tokenmeter_upstream_errors_total', { model: MODEL, kind: 'status' })).toBe(1);
  });

  it('logs one line per request with ids, model, status and tokens, and never the key', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    const res = await request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .set('x-request-id', 'client-trace-42')
      .send(chatBody({ messages: [{ role: 'user', content: 'my secret prompt text' }] }));
    expect(res.headers['x-request-id']).toBe('client-trace-42');
    await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}x`).send(chatBody()).expect(401);
    await settled(t.proxy);
    await new Promise((r) => setImmediate(r));
    const all = t.proxy.logs.join('');
    expect(all).not.toContain(key.secret);
    expect(all).not.toContain(key.secret.slice(3, 20));
    expect(all).not.toContain('my secret prompt text');
    const line = t.proxy.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.clientRequestId === 'client-trace-42');
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(line).toMatchObject({
      keyId: key.id,
      model: MODEL,
      status: 200,
      stream: false,
      requestId: record.requestId,
      chargedTokens: record.chargedTokens,
    });
    expect(record.requestId).not.toBe('client-trace-42');
  });

  it('replaces an unusable x-request-id with its own', async () => {
    const res = await request(t.proxy.url).get('/v1/models').set('x-request-id', 'has spaces and is long '.repeat(10));
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts request messages in the log only when LOG_PAYLOADS is on', async () => {
    const debug = await startProxy({ store: t.s.store, upstreamUrl: t.upstream.url, env: { LOG_PAYLOADS: 'true' } });
    try {
      const key = await keyWithTokens(t.s.store, 100_000);
      await request(debug.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key.secret}`)
        .send(chatBody({ messages: [{ role: 'user', content: 'visible when debugging' }] }));
      await settled(debug);
      await new Promise((r) => setImmediate(r));
      expect(debug.logs.join('')).toContain('visible when debugging');
      expect(debug.logs.join('')).not.toContain(key.secret);
    } finally {
      await debug.close();
    }
  });
});

describe('METRICS_PORT', () => {
  it('serves /metrics only on its own port', async () => {
    const proc = await startProxyProcess({ METRICS_PORT: '0', MODELS_FILE: writeModelsFile() });
    try {
      const port = Number(/"metricsPort":(\d+)/.exec(proc.output())![1]);
      const res = await request(`http://127.0.0.1:${port}`).get('/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toContain('tokenmeter_process_cpu_seconds_total');
      expect((await request(proc.url).get('/metrics')).status).toBe(404);
      expect((await request(`http://127.0.0.1:${port}`).get('/v1/models')).status).toBe(404);
    } finally {
      await proc.stop();
    }
  });
});
