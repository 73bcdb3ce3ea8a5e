/**
 * The other endpoints keep chat's guarantees when the client leaves: before the answer, nothing is charged and the
 * upstream is aborted; mid-stream (a Responses stream) with UPSTREAM_DRAIN_SECONDS=0, the upstream is aborted and what
 * was streamed is charged (test/proxy/stream-drain.test.ts has the default: read on for the usage).
 */
import http from 'node:http';
import { keyWithTokens } from '../helpers/stores';
import { settled, MODEL } from '../helpers/proxy';
import { eventually } from '../helpers/eventually';
import { proxyFixture } from '../helpers/fixture';

describe('client faults on completions, embeddings and responses (redis store)', () => {
  const t = proxyFixture('redis', { models: [{}, { endpoints: ['embeddings'] }], env: { UPSTREAM_DRAIN_SECONDS: '0' } });

  const send = (path: string, secret: string, body: object) => {
    const req = http.request(`${t.proxy.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${secret}` } });
    req.on('error', () => {});
    req.end(JSON.stringify(body));
    return req;
  };
  const abortedUpstream = () =>
    Promise.race([t.upstream.aborted(), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000).unref())]);

  it.each([
    ['/v1/completions', { model: MODEL, prompt: 'Once' }],
    ['/v1/embeddings', { model: 'acme/model-1', input: ['a', 'b'] }],
    ['/v1/responses', { model: MODEL, input: 'Hi', stream: true }],
  ])('a client that leaves before the answer (%s) aborts the upstream and is charged nothing', async (path, body) => {
    t.upstream.behave((_call, _req, res) => new Promise<void>((resolve) => res.once('close', () => resolve())));
    const key = await keyWithTokens(t.s.store, 10_000);
    const req = send(path, key.secret, body);
    await eventually(async () => expect(t.upstream.calls).toHaveLength(1));
    req.destroy();
    expect((await abortedUpstream())?.aborted).toBe(true);
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0, debt: 0 });
    expect(await t.s.store.usage({ keyId: key.id, limit: 10 })).toEqual([]);
  });

  it('a client that leaves a Responses stream midway aborts the upstream and is charged the deltas it was sent', async () => {
    t.upstream.behave((call, _req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const response = { id: 'resp_x', object: 'response', model: call.body.model, status: 'in_progress', output: [], usage: null };
      res.write(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response })}\n\n`);
      for (let i = 1; i <= 3; i++) {
        const delta = {
          type: 'response.output_text.delta',
          sequence_number: i,
          item_id: 'm',
          output_index: 0,
          content_index: 0,
          delta: ` word${i}`,
        };
        res.write(`event: response.output_text.delta\ndata: ${JSON.stringify(delta)}\n\n`);
      }
      // …and the model keeps thinking until the proxy hangs up.
      return new Promise<void>((resolve) => res.once('close', () => resolve()));
    });
    const key = await keyWithTokens(t.s.store, 10_000);
    const req = send('/v1/responses', key.secret, { model: MODEL, input: 'Hi', stream: true });
    let text = '';
    await new Promise<void>((resolve) =>
      req.on('response', (res) =>
        res.on('data', (c: Buffer) => {
          text += c.toString();
          if (text.includes('word3')) resolve();
        }),
      ),
    );
    req.destroy();
    expect((await abortedUpstream())?.aborted).toBe(true);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({ endpoint: 'responses', status: 499, estimated: true, stream: true });
    expect(record.completionTokens).toBeGreaterThanOrEqual(3);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000 - record.chargedTokens, reserved: 0 });
  });
});
