/**
 * The Messages-over-chat translation (`messages_via: chat`) when the chat stream goes wrong, through the official
 * @anthropic-ai/sdk: an error event mid-stream (as vLLM sends one: a `data: {"error": …}` chunk, then [DONE]) and a
 * stream that never reports usage. The same upstream answer asked for as chat is the yardstick: the Messages request
 * is charged the same output, estimated the same way, at the same weights.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { streamReply, words, type Behaviour } from '../helpers/upstream';
import { proxyFixture } from '../helpers/fixture';
import { settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { countText } from '../../src/metering/estimate';

const MODEL = 'acme/chat-only';
const WEIGHTS = { input: 1, cached_input: 0.5, output: 2 };
const priced = (prompt: number, output: number) => Math.ceil(prompt * WEIGHTS.input + output * WEIGHTS.output);
const PROMPT = 'Tell me something.';

/** vLLM's mid-stream failure: three words, an error chunk (no usage), then [DONE]. */
const midStreamError: Behaviour = (call, _req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object) => JSON.stringify({ id: 'c', model: call.body.model, choices: [{ index: 0, delta, finish_reason: null }] });
  res.write(`data: ${chunk({ role: 'assistant', content: '' })}\n\n`);
  for (const w of words(3)) res.write(`data: ${chunk({ content: w })}\n\n`);
  const error = { object: 'error', message: 'CUDA out of memory while decoding', type: 'InternalServerError', param: null, code: 500 };
  res.write(`data: ${JSON.stringify({ error })}\n\n`);
  res.end('data: [DONE]\n\n');
};

describe.each(storeKinds)('Messages via chat when the stream goes wrong (%s store)', (kind) => {
  const t = proxyFixture(kind, {
    models: [{}, { id: MODEL, endpoints: ['chat'], messages_via: 'chat', max_output_tokens: 1_000, quota_weight: WEIGHTS }],
  });
  const ledger = async (keyId: string) => {
    await settled(t.proxy);
    return (await t.s.store.usage({ keyId, limit: 5 }))[0];
  };

  /** The same answer asked for as chat, through the OpenAI SDK: its text, what the SDK threw, its ledger record. */
  async function asChat() {
    const key = await keyWithTokens(t.s.store, 100_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: t.proxy.baseURL, maxRetries: 0 });
    const text: string[] = [];
    let thrown: unknown;
    try {
      const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: PROMPT }], stream: true });
      for await (const chunk of stream) text.push(chunk.choices[0]?.delta?.content ?? '');
    } catch (err) {
      thrown = err;
    }
    return { text: text.join(''), thrown, record: await ledger(key.id), key };
  }

  /** The Messages request, through the Anthropic SDK's stream helper. */
  async function asMessages() {
    const key = await keyWithTokens(t.s.store, 100_000);
    const client = new Anthropic({ apiKey: key.secret, baseURL: t.proxy.url, maxRetries: 0 });
    const stream = client.messages.stream({ model: MODEL, max_tokens: 500, messages: [{ role: 'user', content: PROMPT }] });
    const text: string[] = [];
    stream.on('text', (d) => text.push(d));
    const final = await stream.finalMessage().catch((err: unknown) => err);
    return { text: text.join(''), final, record: await ledger(key.id), key };
  }

  /** Charged as chat was: the same output, estimated alike, each at the model's weights, the balance drawn by it. */
  async function chargedAlike(chat: Awaited<ReturnType<typeof asChat>>, messages: Awaited<ReturnType<typeof asMessages>>) {
    expect(messages.record).toMatchObject({ endpoint: 'messages', completionTokens: chat.record.completionTokens, estimated: true });
    expect(chat.record).toMatchObject({ endpoint: 'chat', estimated: true });
    for (const { record, key } of [chat, messages]) {
      expect(record.chargedTokens).toBe(priced(record.promptTokens, record.completionTokens));
      expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: 100_000 - record.chargedTokens });
    }
    // The prompt is counted from each API's own shape: the same few words, give or take the framing.
    expect(Math.abs(messages.record.promptTokens - chat.record.promptTokens)).toBeLessThanOrEqual(4);
  }

  it('a mid-stream error event: the SDK gets the text before it, then an APIError; charged as chat charges it', async () => {
    t.upstream.behave(midStreamError);
    const chat = await asChat();
    expect(chat.text).toBe(words(3).join(''));
    expect(String(chat.thrown)).toContain('CUDA out of memory');
    const messages = await asMessages();
    expect(messages.text).toBe(words(3).join(''));
    expect(messages.final).toBeInstanceOf(Anthropic.APIError);
    expect(String(messages.final)).toContain('CUDA out of memory');
    expect(chat.record.completionTokens).toBe(countText(words(3).join('')));
    await chargedAlike(chat, messages);
  });

  it('a stream without usage: a whole message for the SDK, charged our count of its text as chat is', async () => {
    t.upstream.behave(streamReply({ usage: 'never' }));
    const chat = await asChat();
    expect(chat.thrown).toBeUndefined();
    expect(chat.text).toBe(words(5).join(''));
    const messages = await asMessages();
    expect(messages.final).toMatchObject({ model: MODEL, stop_reason: 'end_turn', content: [{ type: 'text', text: words(5).join('') }] });
    expect(t.upstream.calls[1].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(chat.record.completionTokens).toBe(countText(words(5).join('')));
    await chargedAlike(chat, messages);
  });
});
