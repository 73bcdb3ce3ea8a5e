/**
 * Streamed completions: passed through as sent, tapped for usage, aborted upstream when the client leaves and the
 * model's drain bound is 0 (test/proxy/stream-drain.test.ts has the default: read on for the usage).
 */
import http from 'node:http';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { streamReply, PROMPT_TOKENS, words, type UpstreamCall } from '../helpers/upstream';
import { countText } from '../../src/metering/estimate';
import { settled, chatBody, MODEL, UPSTREAM_MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

/** Posts and collects the raw response bytes (no SSE parsing), with the time the first body byte came. */
function rawPost(
  url: string,
  secret: string,
  body: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; firstByteAt: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/chat/completions`,
      { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        let firstByteAt = 0;
        res.on('data', (c: Buffer) => {
          firstByteAt ||= Date.now();
          chunks.push(c);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), firstByteAt }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** What the upstream would have sent a client that did not ask for usage, with our model id. */
/** `shown`: the charge the usage chunk carries (the charged tokens and the balance after). */
function expectedStream(tokens: string[], withUsage: boolean, shown?: { charged: number; balance: number }): string {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1700000000, model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }], usage: null })}\n\n`;
  let out = chunk({ role: 'assistant', content: '' }, null);
  for (const t of tokens) out += chunk({ content: t }, null);
  out += chunk({}, 'stop');
  if (withUsage) {
    out += `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1700000000, model: MODEL, choices: [], usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: tokens.length, total_tokens: PROMPT_TOKENS + tokens.length, ...(shown && { tokenmeter_charged_tokens: shown.charged, tokenmeter_balance_tokens: shown.balance }) } })}\n\n`;
  }
  return `${out}data: [DONE]\n\n`;
}

describe.each(storeKinds)('streamed completions (%s store)', (kind) => {
  // The second model reads nothing on after its client leaves (drain_seconds: 0).
  const t = proxyFixture(kind, { models: [{}, { drain_seconds: 0 }] });

  it('asks the upstream for usage, hides the usage chunk the client did not ask for, and is otherwise byte-for-byte', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await rawPost(t.proxy.url, key.secret, chatBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(t.upstream.calls[0].body.stream_options).toEqual({ include_usage: true });
    expect(t.upstream.calls[0].body.model).toBe(UPSTREAM_MODEL);
    expect(res.text).toBe(expectedStream(words(5), false));
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({
      promptTokens: PROMPT_TOKENS,
      completionTokens: 5,
      chargedTokens: PROMPT_TOKENS + 5,
      stream: true,
      estimated: false,
    });
    expect((await t.s.store.getKey(key.id))!.balance).toBe(10_000 - PROMPT_TOKENS - 5);
  });

  it('keeps the usage chunk when the client asked for it, with the charge and the balance after it', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await rawPost(t.proxy.url, key.secret, chatBody({ stream: true, stream_options: { include_usage: true } }));
    const charged = PROMPT_TOKENS + 5;
    expect(res.text).toBe(expectedStream(words(5), true, { charged, balance: 10_000 - charged }));
  });

  it('passes the first chunk on before the upstream has finished', async () => {
    // The upstream sends nothing after its first chunk until the client has received that chunk: a proxy that
    // buffered the stream would never deliver it, and this test would time out.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    t.upstream.behave(streamReply({ tokens: words(3), holdAfterFirst: gate }));
    const key = await keyWithTokens(t.s.store, 10_000);
    const firstChunk = new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${t.proxy.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${key.secret}` } },
        (res) => {
          res.once('data', (c: Buffer) => {
            resolve(c.toString());
            release();
          });
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(chatBody({ stream: true })));
    });
    expect(await firstChunk).toContain('"role":"assistant"');
    expect(t.upstream.calls[0].aborted).toBe(false);
  });

  it('counts the streamed text with the tokenizer when the upstream sends no usage', async () => {
    t.upstream.behave(streamReply({ tokens: ['Hello', ' there', ', friend'], usage: 'never' }));
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await rawPost(t.proxy.url, key.secret, chatBody({ stream: true }));
    expect(res.text).toContain('data: [DONE]');
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record.estimated).toBe(true);
    expect(record.completionTokens).toBe(countText('Hello there, friend'));
    expect((await t.s.store.getKey(key.id))!.balance).toBe(10_000 - record.chargedTokens);
  });

  it('with drain_seconds 0, aborts the upstream request when the client disconnects mid-stream, and charges what was streamed', async () => {
    t.upstream.behave(streamReply({ tokens: words(200), delayMs: 20 }));
    const key = await keyWithTokens(t.s.store, 10_000);
    let received = '';
    const req = http.request(
      `${t.proxy.url}/v1/chat/completions`,
      { method: 'POST', headers: { authorization: `Bearer ${key.secret}` } },
      (res) => {
        res.on('data', (c: Buffer) => {
          received += c.toString();
          if ((received.match(/"content":"w/g) ?? []).length >= 3) req.destroy();
        });
      },
    );
    req.on('error', () => {});
    req.end(JSON.stringify(chatBody({ model: 'acme/model-1', stream: true })));
    const aborted: UpstreamCall = await t.upstream.aborted();
    expect(aborted.aborted).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record.status).toBe(499);
    expect(record.estimated).toBe(true);
    expect(record.completionTokens).toBeGreaterThanOrEqual(3);
    expect(record.completionTokens).toBeLessThan(200);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: 10_000 - record.chargedTokens });
  });
});
