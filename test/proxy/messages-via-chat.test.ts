/**
 * POST /v1/messages to a model whose upstream speaks only chat completions (`messages_via: chat`), through the official
 * @anthropic-ai/sdk: the request arrives as chat, the answer (JSON and streams: text, thinking, tool use) comes back as
 * Messages, each charged exactly the chat usage; a client hang-up mid-stream is drained and charged.
 */
import Anthropic from '@anthropic-ai/sdk';
import { jsonReply, streamReply, words } from '../helpers/upstream';
import { toolReply } from '../helpers/chat-tool-upstream';
import {
  CONTENT_PIECES,
  COMPLETION_TOKENS,
  PROMPT_TOKENS as R_PROMPT,
  REASONING_PIECES,
  reasoningReply,
} from '../helpers/reasoning-upstream';
import { proxyFixture } from '../helpers/fixture';
import { eventually } from '../helpers/eventually';
import { hangUpSeen, settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';

const MODEL = 'acme/chat-only';
const CACHED = { prompt_tokens_details: { cached_tokens: 4 } };
/** A prompt of `prompt` tokens, `cached` of them read from the cache (weight 0.5), and `output` at weight 2. */
const priced = (prompt: number, cached: number, output: number) => Math.ceil(prompt - cached + cached * 0.5 + output * 2);

const TOOLS = [
  {
    name: 'get_weather',
    description: 'Weather by city',
    input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
  },
];

describe.each(storeKinds)('the Messages API through a chat-only upstream (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    models: [
      {},
      {
        id: MODEL,
        upstream_model: 'Vendor/Chat-Only',
        endpoints: ['chat'],
        messages_via: 'chat',
        max_output_tokens: 8_000,
        quota_weight: { input: 1, cached_input: 0.5, output: 2 },
      },
    ],
  });
  const client = (secret: string) => new Anthropic({ apiKey: secret, baseURL: t.proxy.url, maxRetries: 0 });
  const ledger = async (keyId: string) => (await t.s.store.usage({ keyId, limit: 10 }))[0];

  it('messages.create: sent to /chat/completions as chat, answered as a message, charged exactly the chat usage', async () => {
    t.upstream.behave(jsonReply({ usageExtra: CACHED, answerAs: () => 'Vendor/Chat-Only' }));
    const key = await keyWithTokens(t.s.store, 100_000);
    const message = await client(key.secret).messages.create({
      model: MODEL,
      max_tokens: 50,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Be kind.' },
      ],
      // This SDK version's types leave sampling out; the API takes them.
      ...({ temperature: 0.5, top_p: 0.9 } as object),
      stop_sequences: ['###'],
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn', stop_sequence: null });
    expect(message.content).toEqual([{ type: 'text', text: words(5).join('') }]);
    expect(message.usage).toMatchObject({ input_tokens: 5, output_tokens: 5, cache_read_input_tokens: 4 });
    const call = t.upstream.calls[0];
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.body).toMatchObject({
      model: 'Vendor/Chat-Only',
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      stop: ['###'],
      messages: [
        { role: 'system', content: 'Be brief.\n\nBe kind.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({
      endpoint: 'messages',
      promptTokens: 9,
      cachedTokens: 4,
      completionTokens: 5,
      chargedTokens: priced(9, 4, 5),
      estimated: false,
    });
  });

  it('a conversation with tool use, tool results and an image maps to tool_calls, tool messages and image parts', async () => {
    t.upstream.behave(toolReply);
    const key = await keyWithTokens(t.s.store, 100_000);
    const message = await client(key.secret).messages.create({
      model: MODEL,
      max_tokens: 50,
      tools: TOOLS,
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Rain' }] },
            { type: 'text', text: 'And Paris?' },
          ],
        },
      ],
    });
    expect(t.upstream.calls[0].body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: TOOLS[0].input_schema } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'Rain' },
        { role: 'user', content: [{ type: 'text', text: 'And Paris?' }] },
      ],
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]);
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({ promptTokens: 20, completionTokens: 7, chargedTokens: priced(20, 0, 7) });
  });

  it('a stop sequence vLLM names in stop_reason is the answer stop_sequence', async () => {
    t.upstream.behave((call, _req, res) => {
      const choice = { index: 0, message: { role: 'assistant', content: 'one two' }, finish_reason: 'stop', stop_reason: '###' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', model: call.body.model, choices: [choice], usage: { prompt_tokens: 9, completion_tokens: 2 } }));
    });
    const key = await keyWithTokens(t.s.store, 100_000);
    const message = await client(key.secret).messages.create({
      model: MODEL,
      max_tokens: 50,
      stop_sequences: ['###'],
      messages: [{ role: 'user', content: 'Count' }],
    });
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '###' });
  });

  it('messages.stream() text: chat chunks become text deltas, the usage chunk message_delta usage, charged exactly', async () => {
    t.upstream.behave(streamReply({ usageExtra: CACHED }));
    const key = await keyWithTokens(t.s.store, 100_000);
    const stream = client(key.secret).messages.stream({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const message = await stream.finalMessage();
    expect(t.upstream.calls[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(message).toMatchObject({ model: MODEL, stop_reason: 'end_turn', content: [{ type: 'text', text: words(5).join('') }] });
    expect(message.usage).toMatchObject({ input_tokens: 5, output_tokens: 5, cache_read_input_tokens: 4 });
    expect(types[0]).toBe('message_start');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({
      promptTokens: 9,
      cachedTokens: 4,
      completionTokens: 5,
      chargedTokens: priced(9, 4, 5),
      estimated: false,
    });
  });

  it('a stream cut by the output cap stops for max_tokens', async () => {
    t.upstream.behave(streamReply());
    const key = await keyWithTokens(t.s.store, 100_000);
    const message = await client(key.secret)
      .messages.stream({ model: MODEL, max_tokens: 3, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({ completionTokens: 3, chargedTokens: priced(9, 0, 3) });
  });

  it('messages.stream() thinking: the upstream reasoning becomes a thinking block before the text', async () => {
    t.upstream.behave(reasoningReply());
    const key = await keyWithTokens(t.s.store, 100_000);
    const message = await client(key.secret)
      .messages.stream({
        model: MODEL,
        max_tokens: 6_000,
        thinking: { type: 'enabled', budget_tokens: 5_500 },
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: REASONING_PIECES.join(''), signature: '' },
      { type: 'text', text: CONTENT_PIECES.join('') },
    ]);
    expect(t.upstream.calls[0].body.thinking).toBeUndefined();
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({
      promptTokens: R_PROMPT,
      completionTokens: COMPLETION_TOKENS,
      chargedTokens: priced(R_PROMPT, 0, COMPLETION_TOKENS),
    });
  });

  it('messages.stream() tool use: tool calls become tool_use blocks with input_json_delta, stop_reason tool_use', async () => {
    t.upstream.behave(toolReply);
    const key = await keyWithTokens(t.s.store, 100_000);
    const stream = client(key.secret).messages.stream({
      model: MODEL,
      max_tokens: 50,
      tools: TOOLS,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const json: string[] = [];
    stream.on('inputJson', (partial) => json.push(partial));
    const message = await stream.finalMessage();
    expect(json).toEqual(['{"city":', ' "Paris"}']);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    await settled(t.proxy);
    expect(await ledger(key.id)).toMatchObject({
      promptTokens: 20,
      completionTokens: 7,
      chargedTokens: priced(20, 0, 7),
      estimated: false,
    });
  });

  it('a client hang-up mid-stream: the chat upstream is read on for its usage, which is charged (499)', async () => {
    let release!: () => void;
    const until = new Promise<void>((r) => (release = r));
    t.upstream.behave(streamReply({ holdAfterFirst: until }));
    const key = await keyWithTokens(t.s.store, 100_000);
    const stream = client(key.secret).messages.stream({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    const ended = stream.done().catch((e: Error) => e);
    await new Promise<void>((resolve) => stream.on('streamEvent', (e) => e.type === 'message_start' && resolve()));
    stream.abort();
    expect(await ended).toBeInstanceOf(Anthropic.APIUserAbortError);
    await hangUpSeen(t.proxy);
    release();
    await eventually(async () => expect(await ledger(key.id)).toBeTruthy(), 5_000, 'the drained stream to be settled');
    await settled(t.proxy);
    expect(t.upstream.calls[0].aborted).toBe(false);
    expect(await ledger(key.id)).toMatchObject({
      status: 499,
      promptTokens: 9,
      completionTokens: 5,
      chargedTokens: priced(9, 0, 5),
      estimated: false,
    });
  });
});
