/**
 * An upstream that streams a few events, then one line that never ends (64 MiB in 64 KiB writes, as fast as the proxy
 * reads them): the proxy holds at most MAX_STREAM_LINE_BYTES of it, breaks the stream off, ends the client's stream
 * with an error event, and charges what it did send as any broken stream (estimated), on chat's SSE tap and on the
 * chat-to-Messages translation alike.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { Behaviour } from '../helpers/upstream';
import { words } from '../helpers/upstream';
import { proxyFixture } from '../helpers/fixture';
import { MODEL, settled } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import { countText } from '../../src/metering/estimate';
import { lineCapFor, MAX_STREAM_LINE_BYTES } from '../../src/proxy/line-cap';
import { SseTap } from '../../src/proxy/sse-tap';
import { ChatToMessagesStream } from '../../src/proxy/translate/chat-to-messages-stream';
import { chatEndpoint } from '../../src/proxy/endpoints/chat';
import { completionsEndpoint } from '../../src/proxy/endpoints/completions';

const VIA_CHAT = 'acme/chat-only';
const LINE = 64 * 1024 * 1024;
const WRITE = Buffer.alloc(64 * 1024, 'x');

/** What the endless line's upstream managed to write before the proxy closed it. */
interface Sent {
  bytes: number;
  closed: Promise<void>;
}

/** Three words, then `data: {"choices":[{"delta":{"content":"xxxx…` for up to 64 MiB, each write waiting for the socket. */
function endlessLine(sent: Sent): Behaviour {
  return async (call, req, res) => {
    let wake: (() => void) | undefined;
    sent.closed = new Promise<void>((r) => req.socket.once('close', () => (r(), wake?.())));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: object) => JSON.stringify({ id: 'c', model: call.body.model, choices: [{ index: 0, delta }] });
    res.write(`data: ${chunk({ role: 'assistant', content: '' })}\n\n`);
    for (const w of words(3)) res.write(`data: ${chunk({ content: w })}\n\n`);
    res.write(`data: {"id":"c","model":"${call.body.model}","choices":[{"index":0,"delta":{"content":"`);
    while (sent.bytes < LINE && !req.socket.destroyed) {
      sent.bytes += WRITE.length;
      if (!res.write(WRITE)) await new Promise<void>((r) => ((wake = r), res.once('drain', r)));
    }
    res.end('"}}]}\n\n');
  };
}

describe('one endless line in a stream', () => {
  const t = proxyFixture('redis', {
    models: [{}, { id: VIA_CHAT, endpoints: ['chat'], messages_via: 'chat', max_output_tokens: 1_000 }],
  });
  const sent: Sent = { bytes: 0, closed: Promise.resolve() };
  beforeEach(() => {
    sent.bytes = 0;
  });

  /** The proxy closed the upstream long before the line's end: it never read (or held) the line whole. */
  async function brokenOff(keyId: string): Promise<void> {
    await sent.closed;
    expect(sent.bytes).toBeLessThan(LINE / 2);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId, limit: 5 });
    expect(record).toMatchObject({ estimated: true, completionTokens: countText(words(3).join('')) });
    expect(record.chargedTokens).toBe(record.promptTokens + record.completionTokens);
    expect(await t.s.store.getKey(keyId)).toMatchObject({ reserved: 0, balance: 100_000 - record.chargedTokens });
  }

  it('chat: the words before it reach the client, then an error event; charged what was sent', async () => {
    t.upstream.behave(endlessLine(sent));
    const key = await keyWithTokens(t.s.store, 100_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: t.proxy.baseURL, maxRetries: 0 });
    const got: string[] = [];
    const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
    await expect(
      (async () => {
        for await (const chunk of stream) got.push(chunk.choices[0]?.delta?.content ?? '');
      })(),
    ).rejects.toThrow(/mid-stream/);
    expect(got.join('')).toBe(words(3).join(''));
    await brokenOff(key.id);
  });

  it('messages via chat: the text before it reaches the Anthropic SDK, then an error event; charged what was sent', async () => {
    t.upstream.behave(endlessLine(sent));
    const key = await keyWithTokens(t.s.store, 100_000);
    const client = new Anthropic({ apiKey: key.secret, baseURL: t.proxy.url, maxRetries: 0 });
    const stream = client.messages.stream({ model: VIA_CHAT, max_tokens: 500, messages: [{ role: 'user', content: 'hi' }] });
    const text: string[] = [];
    stream.on('text', (d) => text.push(d));
    await expect(stream.finalMessage()).rejects.toThrow(/mid-stream/);
    expect(text.join('')).toBe(words(3).join(''));
    await brokenOff(key.id);
  });
});

describe('the line cap, chunk by chunk', () => {
  const feed = (push: (b: Buffer) => boolean) => {
    let fed = 0;
    while (fed < LINE && push(WRITE)) fed += WRITE.length;
    return fed;
  };

  it('the SSE tap drops the line once it passes the cap, and passes nothing after', () => {
    const tap = new SseTap({ model: Buffer.from('"m"'), dropUsageChunk: false, dialect: chatEndpoint.answer.stream! });
    expect(tap.push(Buffer.from('data: {"choices":[{"delta":{"content":"'))).toHaveLength(0);
    const fed = feed((b) => (tap.push(b), !tap.overlong));
    expect(fed).toBeLessThanOrEqual(MAX_STREAM_LINE_BYTES);
    expect(tap.overlong).toBe(true);
    expect(tap.push(Buffer.from('"}}]}\n\ndata: [DONE]\n\n'))).toHaveLength(0);
    expect(tap.end()).toHaveLength(0);
  });

  it('a line just under the cap passes whole', () => {
    const tap = new SseTap({ model: Buffer.from('"m"'), dropUsageChunk: false, dialect: chatEndpoint.answer.stream! });
    const head = Buffer.from('data: {"choices":[{"delta":{"content":"');
    const body = Buffer.alloc(MAX_STREAM_LINE_BYTES - head.length - 100, 'y');
    tap.push(head);
    for (let i = 0; i < body.length; i += WRITE.length) tap.push(body.subarray(i, i + WRITE.length));
    expect(tap.overlong).toBe(false);
    expect(tap.push(Buffer.from('"}}]}\n\n')).length).toBe(head.length + body.length + 7);
  });

  it('a stream that echoes its prompt holds a first line as long as the echo needs, and caps what passes it', () => {
    // `echo: true` on a 3 MB prompt: the first event is the prompt, one line three times the fixed cap.
    const echoed = 3 * MAX_STREAM_LINE_BYTES;
    const dialect = completionsEndpoint.answer.stream!;
    const tap = new SseTap({ model: Buffer.from('"m"'), dropUsageChunk: false, dialect, skipChars: echoed });
    const head = Buffer.from('data: {"choices":[{"text":"');
    const echo = Buffer.alloc(echoed, 'e');
    tap.push(head);
    for (let i = 0; i < echo.length; i += WRITE.length) tap.push(echo.subarray(i, i + WRITE.length));
    expect(tap.overlong).toBe(false);
    expect(tap.push(Buffer.from('"}]}\n\n')).length).toBe(head.length + echo.length + 6);
    // Its cap is lineCapFor(the echo): an endless line still breaks it off there.
    const fed = feed((b) => (tap.push(b), !tap.overlong));
    expect(tap.overlong).toBe(true);
    expect(fed).toBeLessThanOrEqual(lineCapFor(echoed));
  });

  it('the chat-to-Messages translation fails the stream once a line passes the cap', async () => {
    const translator = new ChatToMessagesStream(undefined);
    const failed = new Promise<NodeJS.ErrnoException>((r) => translator.once('error', r));
    translator.resume();
    translator.write('data: {"choices":[{"delta":{"content":"');
    let fed = 0;
    while (fed <= MAX_STREAM_LINE_BYTES && !translator.destroyed) {
      translator.write(WRITE);
      fed += WRITE.length;
    }
    expect((await failed).code).toBe('ELINETOOLONG');
    expect(fed).toBeLessThanOrEqual(MAX_STREAM_LINE_BYTES + WRITE.length);
  });
});
