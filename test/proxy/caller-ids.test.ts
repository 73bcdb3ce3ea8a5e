/**
 * Every id a request names is the caller's: another account's stored response, item, or a vector store, container or
 * file the caller cannot own is a 404 exactly like an id never seen, and nothing reaches the upstream or is reserved.
 */
import request from 'supertest';
import { hostedToolReply } from '../helpers/hosted-tool-replies';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { chatBody, settled, MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

const TOOLS_MODEL = 'acme/model-1';
const hosted_tools = {
  web_search: { per_call_tokens: 10 },
  file_search: { per_call_tokens: 10, vector_store_ids: ['vs_shared'] },
  code_interpreter: { per_call_tokens: 10, containers: ['cntr_shared'] },
};
const body = (over: Record<string, unknown> = {}) => ({ model: TOOLS_MODEL, input: 'Search.', ...over });

describe.each(storeKinds)('ids a request names (%s store)', (kind) => {
  const t = proxyFixture(kind, { models: [{}, { hosted_tools }] });
  const post = (secret: string, b: object, path = 'responses') =>
    request(t.proxy.url).post(`/v1/${path}`).set('authorization', `Bearer ${secret}`).send(b);

  /** Mallory's request is refused as an id never seen would be: 404 naming the field, nothing forwarded or held. */
  async function refused(secret: string, keyId: string, b: object, param: string, path = 'responses') {
    const asks = t.upstream.calls.length;
    const res = await post(secret, b, path);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found', param });
    expect(t.upstream.calls.length).toBe(asks);
    expect(await t.s.store.getKey(keyId)).toMatchObject({ balance: 10_000, reserved: 0 });
  }

  it.each([false, true])("refuses another account's item_reference, stored item and previous_response_id (stream: %s)", async (stream) => {
    t.upstream.behave(hostedToolReply(['web_search_call']));
    const alice = await keyWithTokens(t.s.store, 10_000);
    const mallory = await keyWithTokens(t.s.store, 10_000);
    const first = await post(alice.secret, body({ tools: [{ type: 'web_search' }], stream }));
    expect(first.status).toBe(200);
    await settled(t.proxy);
    const answer = stream ? JSON.parse(/event: response.completed\ndata: (.*)/.exec(first.text)![1]).response : first.body;
    const [search, message] = answer.output as { id: string }[];

    await refused(mallory.secret, mallory.id, body({ input: [{ type: 'item_reference', id: message.id }] }), 'input[0].id');
    await refused(mallory.secret, mallory.id, body({ input: [{ type: 'item_reference', id: search.id }] }), 'input[0].id');
    const resent = { type: 'message', id: message.id, role: 'assistant', content: 'Found it.' };
    await refused(mallory.secret, mallory.id, body({ input: [{ role: 'user', content: 'Hi' }, resent] }), 'input[1].id');
    await refused(mallory.secret, mallory.id, body({ previous_response_id: answer.id }), 'previous_response_id');
    const approval = { type: 'mcp_approval_response', approval_request_id: search.id, approve: true };
    await refused(mallory.secret, mallory.id, body({ input: [approval] }), 'input[0].approval_request_id');
    await refused(mallory.secret, mallory.id, body({ input: [{ type: 'item_reference', id: 'msg_never_seen' }] }), 'input[0].id');

    // The owner names them all; an item id never recorded (an unstored answer's, sent back whole) passes.
    const own = [
      { type: 'item_reference', id: message.id },
      { ...resent, id: 'msg_unstored' },
      { role: 'user', content: 'More.' },
    ];
    expect((await post(alice.secret, body({ input: own, previous_response_id: answer.id }))).status).toBe(200);
    expect(t.upstream.calls.at(-1)!.body.input[0]).toEqual({ type: 'item_reference', id: message.id });
  });

  it("lets the owner reference its response's input items once it listed them, and no one else ever", async () => {
    const alice = await keyWithTokens(t.s.store, 10_000);
    const mallory = await keyWithTokens(t.s.store, 10_000);
    const input = [{ type: 'message', id: 'msg_input_1', role: 'user', content: 'Hi' }];
    const first = await post(alice.secret, body({ input }));
    expect(first.status).toBe(200);
    await settled(t.proxy);
    const ref = body({ input: [{ type: 'item_reference', id: 'msg_input_1' }] });
    expect((await post(alice.secret, ref)).status).toBe(404);
    const listed = await request(t.proxy.url)
      .get(`/v1/responses/${first.body.id}/input_items`)
      .set('authorization', `Bearer ${alice.secret}`);
    expect(listed.body.data[0].id).toBe('msg_input_1');
    await refused(mallory.secret, mallory.id, ref, 'input[0].id');
    expect((await post(alice.secret, ref)).status).toBe(200);
  });

  it('keeps nothing of an answer not stored: its ids name nothing afterwards', async () => {
    t.upstream.behave(hostedToolReply([]));
    const alice = await keyWithTokens(t.s.store, 10_000);
    const first = await post(alice.secret, body({ store: false }));
    expect(first.body.store).toBe(false);
    await settled(t.proxy);
    const next = await post(alice.secret, body({ previous_response_id: first.body.id }));
    expect(next.status).toBe(404);
    const ref = await post(alice.secret, body({ input: [{ type: 'item_reference', id: first.body.output[0].id }] }));
    expect(ref.status).toBe(404);
    if (t.s.redis) expect(await t.s.redis.keys(`${t.s.prefix}own:*`)).toEqual([]);
  });

  it('refuses vector stores and containers the models file does not share, and every file id', async () => {
    const mallory = await keyWithTokens(t.s.store, 10_000);
    const search = (ids: string[]) => ({ type: 'file_search', vector_store_ids: ids });
    await refused(mallory.secret, mallory.id, body({ tools: [search(['vs_shared', 'vs_alice'])] }), 'tools[0].vector_store_ids[1]');
    await refused(
      mallory.secret,
      mallory.id,
      body({ tools: [{ type: 'code_interpreter', container: 'cntr_alice' }] }),
      'tools[0].container',
    );
    const auto = { type: 'code_interpreter', container: { type: 'auto', file_ids: ['file_alice'] } };
    await refused(mallory.secret, mallory.id, body({ tools: [auto] }), 'tools[0].container.file_ids[0]');
    const file = { role: 'user', content: [{ type: 'input_file', file_id: 'file_alice' }] };
    await refused(mallory.secret, mallory.id, body({ input: [file] }), 'input[0].content[0].file_id');
    const chatFile = { role: 'user', content: [{ type: 'file', file: { file_id: 'file_alice' } }] };
    await refused(
      mallory.secret,
      mallory.id,
      chatBody({ model: MODEL, messages: [chatFile] }),
      'messages[0].content[0].file.file_id',
      'chat/completions',
    );

    t.upstream.behave(hostedToolReply([]));
    const shared = [search(['vs_shared']), { type: 'code_interpreter', container: 'cntr_shared' }];
    expect((await post(mallory.secret, body({ tools: shared }))).status).toBe(200);
    expect((await post(mallory.secret, body({ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }))).status).toBe(200);
  });
});
