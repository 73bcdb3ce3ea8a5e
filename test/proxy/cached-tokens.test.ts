/**
 * Cached and reasoning tokens: the prompt tokens an upstream reports as cached are charged at the model's
 * `quota_weight.cached_input`, the rest of the prompt at `input`; reasoning tokens are recorded (charged as output).
 * The same on every endpoint that reports them (chat, completions, responses; JSON and stream). The ledger, the admin
 * and console APIs, the daily rows and the metrics carry them, and agree with the charge.
 */
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { accountWithPassword, Browser } from '../helpers/console';
import { chatBody, settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { jsonReply, streamReply, words } from '../helpers/upstream';
import { completionsReply, responsesReply } from '../helpers/endpoint-replies';
import { eventually } from '../helpers/eventually';

const ADMIN = 'cached-admin-token-0123';
const CACHED = 'acme/cached';
/** A prompt whose byte bound (what is reserved) is above the 1000 tokens the upstream reports. */
const LONG = chatBody({ model: CACHED, messages: [{ role: 'user', content: 'x'.repeat(1200) }] });
/** 1000 prompt tokens of which 800 cached, 5 completion tokens of which 3 reasoning. */
const DETAILS = { prompt_tokens_details: { cached_tokens: 800 }, completion_tokens_details: { reasoning_tokens: 3 } };
const CHARGE = Math.ceil(200 * 1 + 800 * 0.25 + 5 * 2);

/** The value of one sample in Prometheus text format, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe.each(storeKinds)('cached and reasoning tokens (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    env: { ADMIN_TOKEN: ADMIN },
    models: [{}, { id: CACHED, context_length: 8192, max_output_tokens: 100, quota_weight: { input: 1, cached_input: 0.25, output: 2 } }],
  });
  const post = (secret: string, body: object) =>
    request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(body);

  it.each([
    ['a JSON answer', false],
    ['a stream', true],
  ])('charges the cached part of the prompt at cached_input on %s, and records both kinds', async (_name, stream) => {
    t.upstream.behave(
      stream ? streamReply({ promptTokens: 1000, usageExtra: DETAILS }) : jsonReply({ promptTokens: 1000, usageExtra: DETAILS }),
    );
    const key = await keyWithTokens(t.s.store, 100_000);
    const body = stream ? { ...LONG, stream: true, stream_options: { include_usage: true } } : LONG;
    const res = await post(key.secret, body).expect(200);
    // The client sees the upstream's usage as it was, details included.
    if (!stream) expect(res.body.usage.prompt_tokens_details).toEqual({ cached_tokens: 800 });
    await settled(t.proxy);

    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({ promptTokens: 1000, cachedTokens: 800, completionTokens: 5, reasoningTokens: 3, chargedTokens: CHARGE });
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 100_000 - CHARGE, spentTokens: CHARGE });
    expect((await t.s.store.getAccount(key.accountId))?.usage).toMatchObject({ cachedTokens: 800, reasoningTokens: 3 });

    const usage = await request(t.proxy.url).get(`/admin/usage?key_id=${key.id}`).set('authorization', `Bearer ${ADMIN}`);
    expect(usage.body.data[0]).toMatchObject({ prompt_tokens: 1000, cached_tokens: 800, reasoning_tokens: 3, charged_tokens: CHARGE });
    const shown = await request(t.proxy.url).get(`/admin/keys/${key.id}`).set('authorization', `Bearer ${ADMIN}`);
    expect(shown.body.usage).toMatchObject({ cached_tokens: 800, reasoning_tokens: 3, charged_tokens: CHARGE });

    const metrics = (await request(t.proxy.url).get('/metrics')).text;
    const labels = { model: CACHED, source: 'upstream' };
    expect(sample(metrics, 'tokenmeter_tokens_total', { ...labels, kind: 'cached' })).toBe(800);
    expect(sample(metrics, 'tokenmeter_tokens_total', { ...labels, kind: 'reasoning' })).toBe(3);
    expect(sample(metrics, 'tokenmeter_charged_tokens_total', { model: CACHED })).toBe(CHARGE);
  });

  it.each([
    ['completions', 'JSON', false],
    ['completions', 'stream', true],
    ['responses', 'JSON', false],
    ['responses', 'stream', true],
  ])('charges the same on /v1/%s (%s), where the adapter finds the cached and reasoning tokens', async (endpoint, _how, stream) => {
    t.upstream.behave(
      endpoint === 'completions'
        ? completionsReply({ promptTokens: 1000, usageExtra: DETAILS })
        : responsesReply({ inputTokens: 1000, cachedTokens: 800, reasoningTokens: 3 }),
    );
    const key = await keyWithTokens(t.s.store, 100_000);
    const body =
      endpoint === 'completions'
        ? { model: CACHED, prompt: 'Say hello.', max_tokens: 5, stream, ...(stream && { stream_options: { include_usage: true } }) }
        : { model: CACHED, input: 'Say hello.', max_output_tokens: 5, stream };
    await request(t.proxy.url).post(`/v1/${endpoint}`).set('authorization', `Bearer ${key.secret}`).send(body).expect(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({
      endpoint,
      promptTokens: 1000,
      cachedTokens: 800,
      completionTokens: 5,
      reasoningTokens: 3,
      chargedTokens: CHARGE,
    });
  });

  it("reads DeepSeek's prompt_cache_hit_tokens, and charges a model without cached_input as before", async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    t.upstream.behave(jsonReply({ promptTokens: 1000, usageExtra: { prompt_cache_hit_tokens: 600, prompt_cache_miss_tokens: 400 } }));
    await post(key.secret, LONG).expect(200);
    await post(key.secret, { ...LONG, model: chatBody().model }).expect(200);
    await settled(t.proxy);
    const [cached, plain] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(cached).toMatchObject({ cachedTokens: 600, chargedTokens: Math.ceil(400 + 600 * 0.25 + 5 * 2) });
    expect(plain).toMatchObject({ cachedTokens: 600, chargedTokens: 1000 + 5 });
  });

  it('records nothing cached when the upstream reports no details, or details that are not counts', async () => {
    const key = await keyWithTokens(t.s.store, 100_000);
    t.upstream.behave(jsonReply({ promptTokens: 1000, usageExtra: { prompt_tokens_details: { cached_tokens: -5 } } }));
    await post(key.secret, LONG).expect(200);
    t.upstream.behave(jsonReply({ promptTokens: 1000, usageExtra: { prompt_tokens_details: null, completion_tokens_details: {} } }));
    await post(key.secret, LONG).expect(200);
    await settled(t.proxy);
    for (const r of await t.s.store.usage({ keyId: key.id, limit: 10 })) {
      expect(r).toMatchObject({ cachedTokens: 0, reasoningTokens: 0, chargedTokens: 1000 + 5 * 2 });
    }
  });

  it("shows them on the account holder's usage page, its daily rows and totals", async () => {
    const account = await accountWithPassword(t.s.store, `ada-${kind}@example.org`);
    const key = await keyWithTokens(t.s.store, 100_000, { accountId: account.id });
    t.upstream.behave(jsonReply({ promptTokens: 1000, usageExtra: DETAILS, tokens: words(5) }));
    await post(key.secret, LONG).expect(200);
    await settled(t.proxy);
    const ada = new Browser(t.proxy.url);
    await ada.login(account.email as string);
    const [row] = (await ada.call('get', '/console/api/usage')).body.data;
    expect(row).toMatchObject({ cached_tokens: 800, reasoning_tokens: 3, charged_tokens: CHARGE });
    // The daily rows follow the ledger: the rollup follower adds a record about a second after it settled.
    await eventually(
      async () => {
        const [day] = (await ada.call('get', '/console/api/usage/daily')).body.data;
        expect(day).toMatchObject({ prompt_tokens: 1000, cached_tokens: 800, reasoning_tokens: 3, charged_tokens: CHARGE });
      },
      10_000,
      'the rollup follower to add the record',
    );
    expect((await ada.call('get', '/console/api/me')).body.usage).toMatchObject({ cached_tokens: 800, reasoning_tokens: 3 });
  });
});
