/** Upstream failures: a clear OpenAI-shaped error or a cleanly ended stream, and a balance that is right afterwards. */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import OpenAI from 'openai';
import { keyWithTokens } from '../helpers/stores';
import { streamReply, jsonReply, words, PROMPT_TOKENS, startUpstream } from '../helpers/upstream';
import { startProxy, settled, chatBody, MODEL } from '../helpers/proxy';
import { claimPort } from '../helpers/ports';
import { proxyFixture } from '../helpers/fixture';
import { countText } from '../../src/metering/estimate';

describe('upstream faults (redis store)', () => {
  const t = proxyFixture('redis', { env: { UPSTREAM_TIMEOUT_MS: '300' } });
  let key: { id: string; secret: string };
  const post = (body: unknown) =>
    request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(body as object);
  const untouched = async () => expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0 });

  beforeEach(async () => {
    key = await keyWithTokens(t.s.store, 10_000);
  });

  it('keeps an upstream 4xx status and message, and charges nothing', async () => {
    t.upstream.behave((_c, _r, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: 'This model does not support tools', type: 'BadRequestError', param: 'tools', code: 400 } }),
      );
    });
    const res = await post(chatBody());
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      message: 'This model does not support tools',
      type: 'BadRequestError',
      param: 'tools',
      code: 'upstream_error',
    });
    await settled(t.proxy);
    await untouched();
  });

  it('keeps an upstream 5xx with a plain-text body as an OpenAI-shaped error', async () => {
    t.upstream.behave((_c, _r, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('model is loading');
    });
    const res = await post(chatBody());
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ message: 'model is loading', type: 'api_error', code: 'upstream_error' });
    await settled(t.proxy);
    await untouched();
  });

  it('turns the upstream refusing our credentials into a 502, not a 401 about the client key', async () => {
    t.upstream.behave((_c, _r, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"bad key"}}');
    });
    const res = await post(chatBody());
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_error');
    await settled(t.proxy);
    await untouched();
  });

  it('answers 502 when the upstream refuses connections', async () => {
    const dead = await startProxy({ store: t.s.store, upstreamUrl: `http://127.0.0.1:${await claimPort()}/v1` });
    try {
      const res = await request(dead.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
      expect(res.status).toBe(502);
      expect(res.body.error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
      await settled(dead);
      await untouched();
    } finally {
      await dead.close();
    }
  });

  // The keep-alive race: an upstream closes an idle connection just as we reuse it, and our request never reaches it.
  // Stops a 502 (or a retry storm) where the client's request was fine, and a second charge for the one answer.
  it('sends a request again when the pooled connection it went out on is closed before any answer, and charges once', async () => {
    const seen = new WeakSet<object>();
    t.upstream.behave((call, req, res) => {
      // A connection that carried a request before is closed the moment the next one arrives on it.
      if (seen.has(req.socket)) return void req.socket.destroy();
      seen.add(req.socket);
      return jsonReply()(call, req, res);
    });
    const callsBefore = t.upstream.calls.length;
    const first = await post(chatBody());
    expect(first.status).toBe(200);
    await settled(t.proxy);
    const afterFirst = (await t.s.store.getKey(key.id))?.balance as number;
    const charge = 10_000 - afterFirst;
    expect(charge).toBeGreaterThan(0);

    // Its connection is back in the pool, and (LIFO) is the one the next request goes out on.
    const second = await post(chatBody());
    expect(second.status).toBe(200);
    expect(second.body.choices[0].message.content).toBe(first.body.choices[0].message.content);
    expect(t.upstream.calls.length - callsBefore).toBe(3);
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000 - 2 * charge, reserved: 0 });
    expect(t.proxy.logs.filter((l) => l.includes('upstream closed a pooled connection'))).toHaveLength(1);
  });

  // The same close on a fresh connection is an upstream failure: sending a non-idempotent request again there could
  // make the model generate twice. Stops a retry that hides a real fault.
  it('does not send again when a fresh connection closes before any answer', async () => {
    const upstream = await startUpstream((_c, req) => void req.socket.destroy());
    const fresh = await startProxy({ store: t.s.store, upstreamUrl: upstream.url });
    try {
      const res = await request(fresh.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
      expect(res.status).toBe(502);
      expect(res.body.error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
      expect(upstream.calls).toHaveLength(1);
      await settled(fresh);
      await untouched();
    } finally {
      await fresh.close();
      await upstream.close();
    }
  });

  it('answers 504 when the upstream stalls before its headers', async () => {
    t.upstream.behave(() => {});
    const res = await post(chatBody());
    expect(res.status).toBe(504);
    expect(res.body.error.code).toBe('upstream_timeout');
    await settled(t.proxy);
    await untouched();
  });

  it('answers 502 for a 200 whose body is not JSON, charging nothing', async () => {
    t.upstream.behave((_c, _r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('<html>oops</html>');
    });
    const res = await post(chatBody());
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_error');
    await settled(t.proxy);
    await untouched();
  });

  it('names the content type of a non-JSON answer: a stream sent where JSON was asked for says so', async () => {
    t.upstream.behave((_c, _r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"choices": []}\n\n');
    });
    const res = await post(chatBody());
    expect(res.status).toBe(502);
    expect(res.body.error.message).toBe('The upstream returned a response that is not valid JSON (text/event-stream).');
    // The request's log line says it too, for the operator.
    const line = t.proxy.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.status === 502);
    expect(line).toMatchObject({ error: 'upstream_error', errorDetail: res.body.error.message });
    await settled(t.proxy);
    await untouched();
  });

  it('decodes a gzip response the upstream sent despite identity, and meters it', async () => {
    t.upstream.behave((call, _r, res) => {
      const body = gzipSync(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          created: 1,
          model: call.body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
        }),
      );
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(body);
    });
    const res = await post(chatBody());
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.body.model).toBe(MODEL);
    await settled(t.proxy);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(10_000 - 10);
  });

  it('ends the client stream with an error event when the upstream resets mid-stream, and charges what was sent', async () => {
    t.upstream.behave((call, req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const w of words(3))
        res.write(`data: ${JSON.stringify({ model: call.body.model, choices: [{ index: 0, delta: { content: w } }] })}\n\n`);
      res.write('data: {"model":"half a li');
      setTimeout(() => req.socket.destroy(), 30);
    });
    const client = new OpenAI({ apiKey: key.secret, baseURL: t.proxy.baseURL, maxRetries: 0 });
    const got: string[] = [];
    await expect(
      (async () => {
        const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
        for await (const chunk of stream) got.push(chunk.choices[0]?.delta?.content ?? '');
      })(),
    ).rejects.toThrow(/mid-stream/);
    expect(got.join('')).toBe(words(3).join(''));
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 5 });
    expect(record).toMatchObject({ estimated: true, completionTokens: countText(words(3).join('')) });
    expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, balance: 10_000 - record.chargedTokens });
  });

  it('ends the stream cleanly when the upstream stalls mid-stream', async () => {
    t.upstream.behave((call, _r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ model: call.body.model, choices: [{ index: 0, delta: { content: 'partial' } }] })}\n\n`);
    });
    const res = await rawStream(t.proxy.url, key.secret);
    expect(res).toContain('"content":"partial"');
    expect(res).toContain('"code":"upstream_timeout"');
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0 });
    expect(t.upstream.calls[0].aborted).toBe(true);
  });

  it('passes a stream that ends without [DONE] as it is, and charges its usage', async () => {
    t.upstream.behave(streamReply({ tokens: words(2), done: false }));
    const res = await rawStream(t.proxy.url, key.secret);
    expect(res).not.toContain('[DONE]');
    expect(res).not.toContain('error');
    await settled(t.proxy);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(10_000 - PROMPT_TOKENS - 2);
  });

  it('charges a JSON answer to a stream request (an upstream that ignores stream) from its usage', async () => {
    t.upstream.behave(jsonReply({ tokens: words(3) }));
    const res = await rawStream(t.proxy.url, key.secret);
    expect(JSON.parse(res).model).toBe(MODEL);
    await settled(t.proxy);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(10_000 - PROMPT_TOKENS - 3);
  });
});

function rawStream(url: string, secret: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${secret}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(chatBody({ stream: true })));
  });
}
