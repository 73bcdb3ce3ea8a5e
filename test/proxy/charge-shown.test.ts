/**
 * The charge, shown: every metered JSON answer's headers and a stream's usage (when the client gets usage) say the
 * tokens charged and the balance after, equal to the ledger record and the account's balance, on every endpoint,
 * read through the official openai SDK (which keeps parsing every answer).
 */
import OpenAI from 'openai';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { defaultReply, startUpstream, streamReply, words, type TestUpstream } from '../helpers/upstream';
import { settled, startProxy, MODEL, type ProxyUnderTest } from '../helpers/proxy';

const EMBED = 'acme/model-1';
const START = 100_000;

describe.each(['memory', 'redis'] as const)('the charge shown to the client (%s store)', (kind) => {
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;

  beforeAll(async () => {
    s = await makeStore(kind);
    upstream = await startUpstream();
    // Weights other than 1, so that the charge is not the token count.
    const models = [
      { quota_weight: { input: 2, output: 3 } },
      { endpoints: ['embeddings' as const], quota_weight: { input: 5, output: 1 } },
    ];
    proxy = await startProxy({ store: s.store, upstreamUrl: upstream.url, models });
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
    await s.close();
  });

  /** The request's ledger record (by the x-request-id the answer carries) and the key's balance, once settled. */
  async function ledger(key: { id: string }, requestId: string | null) {
    await settled(proxy);
    const records = await s.store.usage({ keyId: key.id, limit: 10 });
    expect(records).toHaveLength(1);
    expect(records[0].requestId).toBe(requestId);
    return { charged: records[0].chargedTokens, balance: (await s.store.getKey(key.id))!.balance };
  }

  async function client() {
    const key = await keyWithTokens(s.store, START);
    return { key, openai: new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL, maxRetries: 0 }) };
  }

  const shown = (h: Headers) => ({
    charged: Number(h.get('x-tokenmeter-charged-tokens')),
    balance: Number(h.get('x-tokenmeter-balance-tokens')),
  });

  it('chat JSON: the headers say the charge and the balance after it', async () => {
    const { key, openai } = await client();
    const { data, response } = await openai.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe(words(5).join(''));
    const record = await ledger(key, response.headers.get('x-request-id'));
    expect(record.charged).toBe(2 * data.usage!.prompt_tokens + 3 * data.usage!.completion_tokens);
    expect(shown(response.headers)).toEqual(record);
    expect(record.balance).toBe(START - record.charged);
  });

  it('completions JSON, embeddings and responses JSON: the same headers, equal to the ledger', async () => {
    const calls = [
      (o: OpenAI) => o.completions.create({ model: MODEL, prompt: 'Say hello', max_tokens: 20 }).withResponse(),
      (o: OpenAI) => o.embeddings.create({ model: EMBED, input: ['first text', 'second text'] }).withResponse(),
      (o: OpenAI) => o.responses.create({ model: MODEL, input: 'Say hello' }).withResponse(),
    ];
    for (const call of calls) {
      const { key, openai } = await client();
      const { response } = await call(openai);
      const record = await ledger(key, response.headers.get('x-request-id'));
      expect(record.charged).toBeGreaterThan(0);
      expect(shown(response.headers)).toEqual(record);
    }
  });

  it('chat and completions streams: the usage the client asked for carries the charge; none asked, nothing new', async () => {
    for (const endpoint of ['chat', 'completions'] as const) {
      const { key, openai } = await client();
      const { data: stream, response } = await (
        endpoint === 'chat'
          ? openai.chat.completions.create({
              model: MODEL,
              messages: [{ role: 'user', content: 'Hi' }],
              stream: true,
              stream_options: { include_usage: true },
            })
          : openai.completions.create({ model: MODEL, prompt: 'Hi', stream: true, stream_options: { include_usage: true } })
      ).withResponse();
      let usage: Record<string, unknown> | undefined | null;
      for await (const chunk of stream) if (chunk.usage) usage = chunk.usage as unknown as Record<string, unknown>;
      const record = await ledger(key, response.headers.get('x-request-id'));
      expect(usage).toMatchObject({
        completion_tokens: 5,
        tokenmeter_charged_tokens: record.charged,
        tokenmeter_balance_tokens: record.balance,
      });
      expect(response.headers.get('x-tokenmeter-charged-tokens')).toBeNull();
    }
    const { openai } = await client();
    const stream = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    for await (const chunk of stream) expect(chunk.usage ?? null).toBeNull();
  });

  it('responses stream: the final response usage carries the charge', async () => {
    const { key, openai } = await client();
    const { data: stream, response } = await openai.responses.create({ model: MODEL, input: 'Say hello', stream: true }).withResponse();
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') final = event.response;
    expect(final?.model).toBe(MODEL);
    const record = await ledger(key, response.headers.get('x-request-id'));
    expect(final!.usage).toMatchObject({ tokenmeter_charged_tokens: record.charged, tokenmeter_balance_tokens: record.balance });
    expect(record.charged).toBe(2 * final!.usage!.input_tokens + 3 * final!.usage!.output_tokens);
  });
});

describe('the charge shown, at the edges', () => {
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;

  beforeAll(async () => {
    s = await makeStore('redis');
    upstream = await startUpstream();
    const models = [{}, { endpoints: ['embeddings' as const] }];
    proxy = await startProxy({ store: s.store, upstreamUrl: upstream.url, models, env: { UPSTREAM_RESPONSE_LIMIT: '2kb' } });
  });
  afterEach(() => upstream.behave(defaultReply));
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
    await s.close();
  });

  const post = (secret: string, path: string, body: unknown) =>
    fetch(`${proxy.baseURL}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('an embeddings answer past the response limit is relayed as it comes, charged, its head without the charge', async () => {
    const key = await keyWithTokens(s.store, START);
    const res = await post(key.secret, '/embeddings', { model: EMBED, input: ['a', 'b', 'c', 'd'], dimensions: 100 });
    const text = await res.text();
    expect(text.length).toBeGreaterThan(2048);
    expect(JSON.parse(text).data).toHaveLength(4);
    expect(res.headers.get('x-tokenmeter-charged-tokens')).toBeNull();
    await settled(proxy);
    expect(await s.store.usage({ keyId: key.id, limit: 10 })).toHaveLength(1);
  });

  it("an upstream's own charge headers never reach the client (a stream's head cannot carry ours)", async () => {
    upstream.behave((call, req, res) => {
      res.setHeader('x-tokenmeter-charged-tokens', '1');
      res.setHeader('x-tokenmeter-balance-tokens', '999999999');
      return streamReply()(call, req, res);
    });
    const key = await keyWithTokens(s.store, START);
    const res = await post(key.secret, '/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    await res.text();
    expect(res.headers.get('x-tokenmeter-charged-tokens')).toBeNull();
    expect(res.headers.get('x-tokenmeter-balance-tokens')).toBeNull();
  });

  it('a stream whose [DONE] comes after its usage line was charged and sent still ends', async () => {
    let sendDone = () => {};
    const done = new Promise<void>((resolve) => (sendDone = resolve));
    upstream.behave(async (call, _req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (o: object) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: call.body.model, ...o });
      res.write(`data: ${chunk({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] })}\n\n`);
      res.write(`data: ${chunk({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } })}\n\n`);
      await done;
      res.end('data: [DONE]\n\n');
    });
    const key = await keyWithTokens(s.store, START);
    const body = { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } };
    const res = await post(key.secret, '/chat/completions', body);
    const reader = res.body!.getReader();
    let text = '';
    // The usage line reaches the client only once it is charged; [DONE] is sent only then.
    while (!text.includes('tokenmeter_balance_tokens')) text += Buffer.from((await reader.read()).value!).toString();
    sendDone();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('a usage line the upstream ends on, without a newline or [DONE], still shows the charge', async () => {
    upstream.behave((call, _req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (o: object) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: call.body.model, ...o });
      res.write(`data: ${chunk({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] })}\n\n`);
      res.end(`data: ${chunk({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } })}`);
    });
    const key = await keyWithTokens(s.store, START);
    const body = { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } };
    const text = await (await post(key.secret, '/chat/completions', body)).text();
    const last = JSON.parse(text.trim().split('\n').at(-1)!.slice('data: '.length));
    expect(last.model).toBe(MODEL);
    expect(last.usage).toEqual({
      prompt_tokens: 4,
      completion_tokens: 1,
      total_tokens: 5,
      tokenmeter_charged_tokens: 5,
      tokenmeter_balance_tokens: START - 5,
    });
  });
});
