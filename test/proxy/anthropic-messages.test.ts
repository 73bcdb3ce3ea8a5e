/**
 * POST /v1/messages through the official @anthropic-ai/sdk, against an upstream speaking vLLM's wire format: JSON and
 * streams (text, thinking, tool use) charged exactly their usage, cache reads and writes at their own weights; the
 * client's model name everywhere; count_tokens free; errors in Anthropic's shape that the SDK classifies and retries.
 */
import Anthropic from '@anthropic-ai/sdk';
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { eventually } from '../helpers/eventually';
import { hangUpSeen, settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { anthropicErrorReply, messagesReply, TEXT, type Block } from '../helpers/anthropic-upstream';

const MODEL = 'acme/claude-ish';
const WEIGHTS = { input: 1, cached_input: 0.1, cache_write: 1.25, output: 2 };
/** 9 input, 100 written to the cache, 200 read from it. */
const CACHE = { inputTokens: 9, cacheWrite: 100, cacheRead: 200 };
const priced = (output: number) => Math.ceil(9 + 100 * 1.25 + 200 * 0.1 + output * 2);
const THINKING: Block = { type: 'thinking', pieces: ['Let', ' me', ' think'] };
const TOOL: Block = { type: 'tool_use', name: 'get_weather', pieces: ['{"city":', ' "Paris"}'] };

describe.each(storeKinds)('the Messages API through the Anthropic SDK (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    models: [
      {},
      {
        id: MODEL,
        upstream_model: 'Vendor/Model-FP8',
        endpoints: ['messages'],
        quota_weight: WEIGHTS,
        hosted_tools: { web_search: { per_call_tokens: 500, max_calls: 3 } },
      },
    ],
  });
  const client = (secret: string, over: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}) =>
    new Anthropic({ apiKey: secret, baseURL: t.proxy.url, maxRetries: 0, ...over });
  const ledger = async (keyId: string) => (await t.s.store.usage({ keyId, limit: 10 }))[0];

  it('messages.create: charged its usage with cache reads and writes at their weights, the charge in its headers', async () => {
    t.upstream.behave(messagesReply({ ...CACHE, answerAs: 'Vendor/Model-FP8' }));
    const key = await keyWithTokens(t.s.store, 100_000);
    const { data, response } = await client(key.secret)
      .messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    expect(data.model).toBe(MODEL);
    expect(data.content).toEqual([{ type: 'text', text: 'Hello there, friend.' }]);
    expect(t.upstream.calls[0].body).toMatchObject({ model: 'Vendor/Model-FP8', max_tokens: 100 });
    await settled(t.proxy);
    expect(response.headers.get('x-tokenmeter-charged-tokens')).toBe(String(priced(4)));
    expect(await ledger(key.id)).toMatchObject({
      endpoint: 'messages',
      promptTokens: 309,
      cachedTokens: 200,
      completionTokens: 4,
      chargedTokens: priced(4),
      estimated: false,
    });
    expect((await t.s.store.getKey(key.id))!.balance).toBe(100_000 - priced(4));
  });

  it.each([
    ['text', [TEXT], false],
    ['thinking, text and tool use', [THINKING, TEXT, TOOL], false],
    ['split writes', [THINKING, TEXT, TOOL], true],
  ])('messages.stream() (%s): the final message as sent, charged exactly', async (_name, blocks, split) => {
    t.upstream.behave(messagesReply({ ...CACHE, blocks, split, answerAs: 'Vendor/Model-FP8' }));
    const key = await keyWithTokens(t.s.store, 100_000);
    const stream = client(key.secret).messages.stream({
      model: MODEL,
      max_tokens: 100,
      thinking: { type: 'enabled', budget_tokens: 50 },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const message = await stream.finalMessage();
    const output = blocks.reduce((n, b) => n + b.pieces.length, 0);
    expect(message.model).toBe(MODEL);
    expect(message.content.map((b) => b.type)).toEqual(blocks.map((b) => b.type));
    if (blocks.includes(TOOL)) expect(message.content.at(-1)).toMatchObject({ type: 'tool_use', input: { city: 'Paris' } });
    expect(message.usage).toMatchObject({ input_tokens: 9, output_tokens: output, cache_read_input_tokens: 200 });
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({
      promptTokens: 309,
      cachedTokens: 200,
      completionTokens: output,
      chargedTokens: priced(output),
      stream: true,
    });
  });

  it('a message_delta without input_tokens is completed by message_start: the stream is charged all the same', async () => {
    t.upstream.behave(messagesReply({ ...CACHE, deltaOutputOnly: true }));
    const key = await keyWithTokens(t.s.store, 100_000);
    await client(key.secret)
      .messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({ promptTokens: 309, cachedTokens: 200, completionTokens: 4, chargedTokens: priced(4) });
  });

  it('a stream without usage is charged our count of every delta (text, thinking, tool input)', async () => {
    t.upstream.behave(messagesReply({ noUsage: true, blocks: [THINKING, TEXT, TOOL] }));
    const key = await keyWithTokens(t.s.store, 100_000);
    // The SDK needs usage in a stream; a server that sends none is read raw.
    const body = { model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] };
    const res = await request(t.proxy.url).post('/v1/messages').set('x-api-key', key.secret).send(body).expect(200);
    expect(res.text).toContain('"model":"acme/claude-ish"');
    await settled(t.proxy);
    const record = await ledger(key.id);
    expect(record.estimated).toBe(true);
    // Every delta's text is output: no fewer tokens than the pieces' words, whatever the tokenizer makes of them.
    expect(record.completionTokens).toBeGreaterThanOrEqual(9);
  });

  it("messages.countTokens is the upstream's count, or ours where it has none, and free", async () => {
    t.upstream.behave(messagesReply({ inputTokens: 42 }));
    const key = await keyWithTokens(t.s.store, 1_000);
    const body = { model: MODEL, messages: [{ role: 'user' as const, content: 'Count me, please.' }] };
    expect(await client(key.secret).messages.countTokens(body)).toEqual({ input_tokens: 42 });
    expect(t.upstream.calls[0]).toMatchObject({ path: '/v1/messages/count_tokens', body: { model: 'Vendor/Model-FP8' } });
    t.upstream.behave(anthropicErrorReply(404, 'not_found_error'));
    const ours = await client(key.secret).messages.countTokens(body);
    expect(ours.input_tokens).toBeGreaterThan(3);
    expect(ours.input_tokens).toBeLessThan(20);
    await settled(t.proxy);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(1_000);
    expect(await t.s.store.usage({ keyId: key.id, limit: 10 })).toEqual([]);
  });

  it('a Claude-Code-shaped request (x-api-key, cached system blocks, 20 tools, thinking, stream) is metered exactly', async () => {
    t.upstream.behave(messagesReply({ ...CACHE, blocks: [THINKING, TOOL] }));
    const key = await keyWithTokens(t.s.store, 1_000_000);
    const tools = Array.from({ length: 20 }, (_, i) => ({
      name: `tool_${i}`,
      description: `Tool number ${i}`,
      input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
    }));
    const message = await client(key.secret, { defaultHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } })
      .messages.stream({
        model: MODEL,
        max_tokens: 1000,
        system: [
          { type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
        ],
        tools,
        thinking: { type: 'enabled', budget_tokens: 500 },
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Read main.ts', cache_control: { type: 'ephemeral' } }] }],
      })
      .finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    const call = t.upstream.calls[0];
    expect(call.headers['anthropic-version']).toMatch(/^\d{4}-\d\d-\d\d$/);
    expect(call.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(call.headers['x-api-key']).toBeUndefined();
    expect(call.raw.toString()).not.toContain(key.secret);
    expect(call.body.tools).toHaveLength(20);
    expect(call.body.system[0].cache_control).toEqual({ type: 'ephemeral' });
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({ promptTokens: 309, completionTokens: 5, chargedTokens: priced(5) });
  });

  it('a client hang-up mid-stream: the upstream is read on for its usage, which is charged (499)', async () => {
    let release!: () => void;
    const until = new Promise<void>((r) => (release = r));
    t.upstream.behave(messagesReply({ ...CACHE, blocks: [TEXT], holdAfter: { deltas: 1, until } }));
    const key = await keyWithTokens(t.s.store, 100_000);
    const stream = client(key.secret).messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const ended = stream.done().catch((e: Error) => e);
    await new Promise<void>((resolve) => stream.on('text', () => resolve()));
    stream.abort();
    expect(await ended).toBeInstanceOf(Anthropic.APIUserAbortError);
    await hangUpSeen(t.proxy);
    release();
    await eventually(async () => expect(await ledger(key.id)).toBeTruthy(), 5_000, 'the drained stream to be settled');
    await settled(t.proxy);
    expect(t.upstream.calls[0].aborted).toBe(false);
    expect(await ledger(key.id)).toMatchObject({ status: 499, completionTokens: 4, chargedTokens: priced(4), estimated: false });
  });

  it("a stream the upstream breaks after message_start is charged our count of what streamed, not message_start's output", async () => {
    const reply = messagesReply({ ...CACHE, blocks: [{ type: 'text', pieces: ['one ', 'two ', 'three ', 'four ', 'five '] }] });
    t.upstream.behave((call, req, res) => {
      // Everything up to message_delta, then (once that has left) the connection drops.
      const write = res.write.bind(res);
      res.write = ((chunk: string) => {
        if (!chunk.includes('message_delta')) return write(chunk);
        setTimeout(() => res.destroy(), 50);
        return true;
      }) as typeof res.write;
      res.end = (() => res) as typeof res.end;
      return reply(call, req, res);
    });
    const key = await keyWithTokens(t.s.store, 100_000);
    const res = await request(t.proxy.url)
      .post('/v1/messages')
      .set('x-api-key', key.secret)
      .send({ model: MODEL, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Count' }] });
    expect(res.text).toContain('event: error');
    await settled(t.proxy);
    const record = await ledger(key.id);
    expect(record).toMatchObject({ estimated: true });
    expect(record.completionTokens).toBeGreaterThanOrEqual(5);
  });

  it.each([
    [429, 'rate_limit_error'],
    [529, 'overloaded_error'],
  ])('the SDK retries a %i (%s) and is charged once', async (status, type) => {
    let calls = 0;
    const reply = messagesReply(CACHE);
    t.upstream.behave((call, req, res) => (calls++ === 0 ? anthropicErrorReply(status, type)(call, req, res) : reply(call, req, res)));
    const key = await keyWithTokens(t.s.store, 100_000);
    const message = await client(key.secret, { maxRetries: 2 }).messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.model).toBe(MODEL);
    expect(calls).toBe(2);
    await settled(t.proxy);
    expect(await t.s.store.usage({ keyId: key.id, limit: 10 })).toHaveLength(1);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(100_000 - priced(4));
  });

  it('an insufficient balance is a billing_error (402) the SDK does not retry, nothing charged or held', async () => {
    t.upstream.behave(messagesReply());
    // Below the prompt's own cost: a short balance that covers the prompt only lowers max_tokens.
    const key = await keyWithTokens(t.s.store, 3);
    let fetched = 0;
    const counting: typeof fetch = (input, init) => {
      fetched++;
      return fetch(input, init);
    };
    const err = await client(key.secret, { maxRetries: 3, fetch: counting })
      .messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
    expect(fetched).toBe(1);
    expect(t.upstream.calls).toHaveLength(0);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(3);
  });

  it.each([
    ['no max_tokens', { messages: [{ role: 'user', content: 'Hi' }] }, 400, 'invalid_request_error', /max_tokens/],
    [
      'temperature above 1',
      { max_tokens: 10, temperature: 1.5, messages: [{ role: 'user', content: 'Hi' }] },
      400,
      'invalid_request_error',
      /temperature/,
    ],
    [
      'a thinking budget above max_tokens',
      { max_tokens: 10, thinking: { type: 'enabled', budget_tokens: 20 }, messages: [{ role: 'user', content: 'Hi' }] },
      400,
      'invalid_request_error',
      /budget_tokens/,
    ],
    [
      'a server tool the model does not allow',
      { max_tokens: 10, tools: [{ type: 'code_execution_20250522', name: 'code_execution' }], messages: [{ role: 'user', content: 'Hi' }] },
      400,
      'invalid_request_error',
      /code_execution/,
    ],
    [
      'an unknown model',
      { model: 'acme/nope', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] },
      404,
      'not_found_error',
      /acme\/nope/,
    ],
  ])("refuses %s in Anthropic's shape", async (_name, body, status, type, message) => {
    const key = await keyWithTokens(t.s.store, 1_000);
    const res = await request(t.proxy.url)
      .post('/v1/messages')
      .set('x-api-key', key.secret)
      .send({ model: MODEL, ...body });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ type: 'error', error: { type, message: expect.stringMatching(message) } });
    expect(t.upstream.calls).toHaveLength(0);
  });

  it('a missing or unknown key is an authentication_error (401); two different keys are refused', async () => {
    const key = await keyWithTokens(t.s.store, 1_000);
    const other = await keyWithTokens(t.s.store, 1_000);
    const body = { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] };
    const none = await request(t.proxy.url).post('/v1/messages').send(body);
    expect(none.status).toBe(401);
    expect(none.body.error.type).toBe('authentication_error');
    const both = await request(t.proxy.url)
      .post('/v1/messages')
      .set('x-api-key', key.secret)
      .set('authorization', `Bearer ${other.secret}`)
      .send(body);
    expect(both.status).toBe(401);
    t.upstream.behave(messagesReply());
    await request(t.proxy.url).post('/v1/messages').set('authorization', `Bearer ${key.secret}`).send(body).expect(200);
  });

  it('an allowed server tool is capped at its max_calls, reserved, and billed per call usage reports', async () => {
    t.upstream.behave(messagesReply({ ...CACHE, serverToolUse: { web_search_requests: 2 } }));
    const key = await keyWithTokens(t.s.store, 100_000);
    await client(key.secret).messages.create({
      model: MODEL,
      max_tokens: 100,
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 10 }],
      messages: [{ role: 'user', content: 'Search' }],
    });
    expect(t.upstream.calls[0].body.tools[0].max_uses).toBe(3);
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({ toolCalls: 2, toolTokens: 1000, chargedTokens: priced(4) + 1000 });
  });
});
