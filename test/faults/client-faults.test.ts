/**
 * Client faults: a client that leaves before the answer began costs nothing and stops the upstream; a client that
 * stops reading holds the upstream back instead of making the proxy buffer the stream. (A client leaving mid-stream
 * is pinned in test/proxy/chat-stream.test.ts.)
 */
import http from 'node:http';
import { keyWithTokens } from '../helpers/stores';
import { PROMPT_TOKENS } from '../helpers/upstream';
import { settled, chatBody, MODEL } from '../helpers/proxy';
import { eventually } from '../helpers/eventually';
import { proxyFixture } from '../helpers/fixture';

describe('client faults (redis store)', () => {
  const t = proxyFixture('redis', { models: [{ context_length: 200_000, max_output_tokens: 100_000 }] });

  it.each([
    ['a JSON request', false],
    ['a stream request', true],
  ])(
    'a client that disconnects before the headers (%s) aborts the upstream request, is charged nothing and leaves no reservation',
    async (_what, stream) => {
      // The upstream is still thinking: it answers nothing until the proxy closes its request.
      t.upstream.behave((_call, _req, res) => new Promise<void>((resolve) => res.once('close', () => resolve())));
      const key = await keyWithTokens(t.s.store, 10_000);
      const req = http.request(`${t.proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}` },
      });
      const gotResponse = jest.fn();
      req.on('response', gotResponse);
      req.on('error', () => {});
      req.end(JSON.stringify(chatBody({ stream })));

      // The reservation was made and the upstream reached: now the client gives up.
      await eventually(async () => expect(t.upstream.calls).toHaveLength(1));
      expect((await t.s.store.getKey(key.id))!.reserved).toBeGreaterThan(0);
      req.destroy();

      const aborted = await Promise.race([
        t.upstream.aborted(),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000).unref()),
      ]);
      expect(aborted?.aborted).toBe(true);
      await settled(t.proxy);
      expect(gotResponse).not.toHaveBeenCalled();
      expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0, debt: 0 });
      expect(await t.s.store.usage({ keyId: key.id, limit: 10 })).toEqual([]);
    },
  );

  it('a client that stops reading holds the upstream back (no buffering of the stream), then gets all of it, charged once', async () => {
    const TOTAL = 64 * 1024 * 1024;
    // Valid chunks of ~4 KB of text each; the upstream writes as fast as write() lets it and waits for 'drain'.
    const chunkFor = (model: string) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-big',
        object: 'chat.completion.chunk',
        created: 1700000000,
        model,
        choices: [{ index: 0, delta: { content: 'lorem ipsum dolor sit amet, '.repeat(150) }, finish_reason: null }],
      })}\n\n`;
    const writer = { written: 0, chunks: 0, waitingSince: 0, done: false };
    t.upstream.behave(async (call, _req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = chunkFor(call.body.model);
      const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
      while (writer.written < TOTAL) {
        if (call.aborted) return;
        writer.chunks++;
        writer.written += Buffer.byteLength(chunk);
        if (!res.write(chunk)) {
          writer.waitingSince = Date.now();
          await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
          writer.waitingSince = 0;
        }
      }
      const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: writer.chunks, total_tokens: PROMPT_TOKENS + writer.chunks };
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-big', object: 'chat.completion.chunk', created: 1700000000, model: call.body.model, choices: [], usage })}\n\n`,
      );
      res.end('data: [DONE]\n\n');
      writer.done = true;
    });
    const key = await keyWithTokens(t.s.store, 1_000_000);

    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(
        `${t.proxy.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' } },
        resolve,
      );
      req.on('error', reject);
      req.end(JSON.stringify(chatBody({ stream: true, max_tokens: 50_000 })));
    });
    // Headers read; now the client reads nothing.
    response.pause();
    expect(response.statusCode).toBe(200);

    // Wait until the upstream has been blocked on 'drain' for 2 s straight (or has finished: the proxy buffered it all).
    const deadline = Date.now() + 20_000;
    while (!writer.done && !(writer.waitingSince > 0 && Date.now() - writer.waitingSince >= 2_000) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const stalledAt = writer.written;
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    console.log(
      writer.done
        ? `slow reader: the upstream wrote all ${mb(TOTAL)} without being held back`
        : `slow reader: the upstream was held back after ${mb(stalledAt)} of ${mb(TOTAL)}`,
    );
    expect(writer.done).toBe(false);
    // What the kernel holds accounts for ~8 MB here: on each hop a send buffer that grows to tcp_wmem's max (4 MB)
    // plus the receive window. A proxy that buffered the stream would have let the upstream write all 64 MB.
    expect(stalledAt).toBeLessThan(16 * 1024 * 1024);

    // The client reads again: everything arrives, rewritten to our model id, ends with [DONE], and is charged once.
    let received = 0;
    let tail = '';
    response.on('data', (c: Buffer) => {
      received += c.length;
      tail = (tail + c.toString('latin1')).slice(-64);
    });
    await new Promise<void>((resolve, reject) => {
      response.once('end', resolve);
      response.once('error', reject);
      response.resume();
    });
    expect(writer.done).toBe(true);
    expect(tail.endsWith('}\n\ndata: [DONE]\n\n')).toBe(true);
    // Every content chunk, none lost or repeated; the usage chunk the client did not ask for was removed.
    expect(received).toBe(writer.chunks * Buffer.byteLength(chunkFor(MODEL)) + 'data: [DONE]\n\n'.length);

    await settled(t.proxy);
    const records = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ promptTokens: PROMPT_TOKENS, completionTokens: writer.chunks, estimated: false, status: 200 });
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 1_000_000 - records[0].chargedTokens, reserved: 0, debt: 0 });
  }, 60_000);
});
