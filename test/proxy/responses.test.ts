/** POST /v1/responses and its stored state: metered like chat, and no account reaches another's responses. */
import request from 'supertest';
import { responsesReply } from '../helpers/endpoint-replies';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { words } from '../helpers/upstream';
import { settled, MODEL, UPSTREAM_MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

const body = (over: Record<string, unknown> = {}) => ({ model: MODEL, input: 'Say hello.', ...over });

/** The `data:` payloads of a Responses stream, with the `event:` line before each. */
function events(text: string): { event: string; data: Record<string, any> }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim().length > 0)
    .map((block) => {
      const lines = block.split('\n');
      return { event: lines[0].replace(/^event: /, ''), data: JSON.parse(lines[1].replace(/^data: /, '')) };
    });
}

describe.each(storeKinds)('responses (%s store)', (kind) => {
  const t = proxyFixture(kind, { models: [{}, { capabilities: { vision: false } as never }] });
  const post = (secret: string, b: object) => request(t.proxy.url).post('/v1/responses').set('authorization', `Bearer ${secret}`).send(b);

  it("answers with the client's model id, charges input and output tokens, and records the endpoint", async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body({ instructions: 'Be brief.' }));
    expect(res.status).toBe(200);
    expect(res.body.model).toBe(MODEL);
    expect(res.body.output[0].content[0].text).toBe(words(5).join(''));
    expect(t.upstream.calls[0]).toMatchObject({
      path: '/v1/responses',
      body: { model: UPSTREAM_MODEL, instructions: 'Be brief.', max_output_tokens: 1024 },
    });
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000 - (9 + 5), reserved: 0 });
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ endpoint: 'responses', promptTokens: 9, completionTokens: 5, stream: false });
  });

  it('lowers max_output_tokens to what the balance covers', async () => {
    const key = await keyWithTokens(t.s.store, 40);
    const res = await post(key.secret, body({ max_output_tokens: 500 }));
    expect(res.status).toBe(200);
    expect(t.upstream.calls[0].body.max_output_tokens).toBeLessThan(40);
  });

  it("streams typed events without [DONE], every event's response naming the client's model, and charges the last one's usage", async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(res.text).not.toContain('[DONE]');
    expect(res.text).not.toContain(UPSTREAM_MODEL);
    const all = events(res.text);
    expect(all[0].event).toBe('response.created');
    expect(all.at(-1)!.event).toBe('response.completed');
    for (const e of all) {
      expect(e.data.type).toBe(e.event);
      if (e.data.response) expect(e.data.response.model).toBe(MODEL);
    }
    expect(all.at(-1)!.data.response.usage).toMatchObject({ input_tokens: 9, output_tokens: 5 });
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ endpoint: 'responses', promptTokens: 9, completionTokens: 5, stream: true, estimated: false });
  });

  it('charges an incomplete stream (max_output_tokens reached) by its response.incomplete usage', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body({ stream: true, max_output_tokens: 3 }));
    expect(events(res.text).at(-1)!.event).toBe('response.incomplete');
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ promptTokens: 9, completionTokens: 3, estimated: false });
  });

  it('counts a stream without usage from its deltas', async () => {
    t.upstream.behave(responsesReply({ usage: false }));
    const key = await keyWithTokens(t.s.store, 10_000);
    await post(key.secret, body({ stream: true })).expect(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record.estimated).toBe(true);
    expect(record.completionTokens).toBeGreaterThanOrEqual(5);
  });

  it.each([
    [{ background: true }, 'background'],
    [{ conversation: 'conv_1' }, 'conversation'],
    [{ input: [] }, 'input'],
    [{ input: [{ content: 'no role' }] }, 'input[0].role'],
    [{ temperature: 3 }, 'temperature'],
    [{ max_output_tokens: 0 }, 'max_output_tokens'],
    [{ model: 'acme/model-1', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:,' }] }] }, 'input[0].content[0]'],
  ])('refuses %j naming %s, forwarding and charging nothing', async (over, param) => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body(over));
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
    expect(t.upstream.calls).toHaveLength(0);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0 });
  });

  it("keeps stored responses to their account: another account's id is a 404 everywhere, and reaches no upstream", async () => {
    const alice = await keyWithTokens(t.s.store, 10_000);
    const mallory = await keyWithTokens(t.s.store, 10_000);
    const first = await post(alice.secret, body());
    const id = first.body.id as string;
    const asks = t.upstream.calls.length;

    const as = (secret: string, method: 'get' | 'delete', path: string) =>
      request(t.proxy.url)[method](`/v1/responses/${path}`).set('authorization', `Bearer ${secret}`);
    const stolen = await post(mallory.secret, body({ previous_response_id: id }));
    expect(stolen.status).toBe(404);
    expect(stolen.body.error.param).toBe('previous_response_id');
    for (const r of [
      await as(mallory.secret, 'get', id),
      await as(mallory.secret, 'get', `${id}/input_items`),
      await as(mallory.secret, 'delete', id),
    ]) {
      expect(r.status).toBe(404);
    }
    expect((await as(mallory.secret, 'get', 'resp_never_seen')).status).toBe(404);
    expect(t.upstream.calls.length).toBe(asks);
    await settled(t.proxy);
    expect(await t.s.store.getKey(mallory.id)).toMatchObject({ balance: 10_000, reserved: 0 });

    const own = await as(alice.secret, 'get', id);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id, model: MODEL });
    const items = await as(alice.secret, 'get', `${id}/input_items?limit=5&secret=x`);
    expect(items.status).toBe(200);
    expect(t.upstream.calls.at(-1)!.path).toBe(`/v1/responses/${id}/input_items?limit=5`);
    const next = await post(alice.secret, body({ previous_response_id: id }));
    expect(next.status).toBe(200);
    expect(t.upstream.calls.at(-1)!.body.previous_response_id).toBe(id);

    expect((await as(alice.secret, 'delete', id)).status).toBe(200);
    expect((await as(alice.secret, 'get', id)).status).toBe(404);
  });

  it('records the owner of a streamed response too', async () => {
    const alice = await keyWithTokens(t.s.store, 10_000);
    const res = await post(alice.secret, body({ stream: true }));
    const id = events(res.text)[0].data.response.id as string;
    const own = await request(t.proxy.url).get(`/v1/responses/${id}`).set('authorization', `Bearer ${alice.secret}`);
    expect(own.status).toBe(200);
  });
});
