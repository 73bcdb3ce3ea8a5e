/**
 * Hosted tools (web search, file search, a code interpreter…): refused unless the model allows them; when allowed,
 * bounded by `max_tool_calls`, reserved up front and charged per call the answer reports, as a line of its own.
 */
import request from 'supertest';
import { hostedToolReply, searchChatReply } from '../helpers/hosted-tool-replies';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { chatBody, settled, MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';
import { modelPage } from '../../src/console/model-page';
import { usageCloudEvent } from '../../src/api/webhook';

const TOOLS_MODEL = 'acme/model-1';
const ADMIN_TOKEN = 'admin-token-0123456789';
const hosted_tools = {
  web_search: { per_call_tokens: 200, max_calls: 3 },
  file_search: { per_call_tokens: 100, max_calls: 2, vector_store_ids: ['vs_shared'] },
};
const fn = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } };
const body = (over: Record<string, unknown> = {}) => ({ model: MODEL, input: 'Search for tokenmeter.', ...over });
const toolsBody = (over: Record<string, unknown> = {}) =>
  body({ model: TOOLS_MODEL, tools: [{ type: 'web_search' }, { type: 'file_search', vector_store_ids: ['vs_shared'] }], ...over });

/** The `data:` payloads of a Responses stream. */
const events = (text: string) =>
  text
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)) as Record<string, any>);

describe.each(storeKinds)('hosted tools (%s store)', (kind) => {
  const t = proxyFixture(kind, { models: [{}, { hosted_tools }], env: { ADMIN_TOKEN } });
  const post = (secret: string, path: string, b: object) =>
    request(t.proxy.url).post(`/v1/${path}`).set('authorization', `Bearer ${secret}`).send(b);

  it.each([
    'web_search',
    'web_search_preview',
    'file_search',
    'code_interpreter',
    'mcp',
    'image_generation',
    'computer_use_preview',
    'local_shell',
  ])("refuses a hosted '%s' tool by default, naming it, forwarding and reserving nothing", async (type) => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, 'responses', body({ tools: [fn, { type }] }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'tools[1].type' });
    expect(res.body.error.message).toContain(`'${type}'`);
    const chat = await post(key.secret, 'chat/completions', chatBody({ tools: [{ type }] }));
    expect(chat.status).toBe(400);
    expect(chat.body.error.param).toBe('tools[0].type');
    expect(t.upstream.calls).toHaveLength(0);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0 });
  });

  it("refuses chat's web_search_options, a tool_choice naming a hosted tool and a bad max_tool_calls; function tools pass", async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const search = await post(key.secret, 'chat/completions', chatBody({ web_search_options: {} }));
    expect(search.status).toBe(400);
    expect(search.body.error.param).toBe('web_search_options');
    const choice = await post(key.secret, 'responses', body({ tools: [fn], tool_choice: { type: 'web_search_preview' } }));
    expect(choice.body.error.param).toBe('tool_choice.type');
    expect(t.upstream.calls).toHaveLength(0);
    for (const bad of [-1, 1.5, '3']) {
      const res = await post(key.secret, 'responses', toolsBody({ max_tool_calls: bad }));
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('max_tool_calls');
    }
    expect(t.upstream.calls).toHaveLength(0);
    expect((await post(key.secret, 'responses', body({ tools: [fn] }))).status).toBe(200);
    expect((await post(key.secret, 'chat/completions', chatBody({ tools: [{ type: 'function', function: { name: 'f' } }] }))).status).toBe(
      200,
    );
  });

  it('bounds an allowed hosted tool by max_tool_calls and charges each reported call as a ledger line and header of its own', async () => {
    t.upstream.behave(hostedToolReply(['web_search_call', 'web_search_call', 'file_search_call', 'web_search_call']));
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, 'responses', toolsBody({ max_tool_calls: 10 }));
    expect(res.status).toBe(200);
    // The largest max_calls of the request's hosted tools, not the client's 10.
    expect(t.upstream.calls[0].body.max_tool_calls).toBe(3);
    // 2 web searches at 200, 1 file search at 100, on top of 100 in and 10 out.
    expect(res.headers['x-tokenmeter-tool-tokens']).toBe('500');
    expect(res.headers['x-tokenmeter-charged-tokens']).toBe('610');
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ promptTokens: 100, completionTokens: 10, toolCalls: 3, toolTokens: 500, chargedTokens: 610 });
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000 - 610, reserved: 0 });
    const admin = await request(t.proxy.url).get(`/admin/usage?key_id=${key.id}`).set('authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(admin.body.data[0]).toMatchObject({ tool_calls: 3, tool_tokens: 500, charged_tokens: 610 });
    // …and the usage.settled event its webhook carries (here as `usage export --format cloudevents` writes it).
    expect(JSON.parse(usageCloudEvent(admin.body.data[0])).data).toMatchObject({ tool_calls: 3, tool_tokens: 500 });

    await post(key.secret, 'responses', toolsBody({ max_tool_calls: 1 })).expect(200);
    expect(t.upstream.calls[1].body.max_tool_calls).toBe(1);
    await settled(t.proxy);
    const [second] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(second).toMatchObject({ toolCalls: 1, toolTokens: 200, chargedTokens: 310 });
  });

  it('charges the calls a Responses stream reports in response.completed, and shows the tool line in its usage', async () => {
    t.upstream.behave(hostedToolReply(['web_search_call', 'file_search_call']));
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, 'responses', toolsBody({ stream: true }));
    expect(res.status).toBe(200);
    const all = events(res.text);
    expect(all.filter((e) => e.type === 'response.output_item.done').map((e) => e.item.type)).toEqual([
      'web_search_call',
      'file_search_call',
      'message',
    ]);
    const usage = all.at(-1)!.response.usage;
    expect(usage).toMatchObject({ tokenmeter_tool_tokens: 300, tokenmeter_charged_tokens: 410 });
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ stream: true, toolCalls: 2, toolTokens: 300, chargedTokens: 410, estimated: false });
  });

  it('charges every reserved call when the answer reports no usage to read', async () => {
    t.upstream.behave(hostedToolReply(['web_search_call'], { usage: false }));
    const key = await keyWithTokens(t.s.store, 10_000);
    await post(key.secret, 'responses', toolsBody({ max_tool_calls: 2 })).expect(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ estimated: true, toolCalls: 2, toolTokens: 400 });
  });

  it('charges one web search per chat request with web_search_options, whatever its citations', async () => {
    t.upstream.behave(searchChatReply);
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, 'chat/completions', chatBody({ model: TOOLS_MODEL, web_search_options: {} }));
    expect(res.status).toBe(200);
    expect(res.headers['x-tokenmeter-tool-tokens']).toBe('200');
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ toolCalls: 1, toolTokens: 200, chargedTokens: 310 });
  });

  it("shows each model's hosted tools on /v1/models and the models page, without the ids it shares", async () => {
    const key = await keyWithTokens(t.s.store, 10);
    const list = await request(t.proxy.url).get('/v1/models').set('authorization', `Bearer ${key.secret}`);
    const byId = new Map((list.body.data as { id: string; hosted_tools?: unknown }[]).map((m) => [m.id, m]));
    expect(byId.get(MODEL)!.hosted_tools).toBeUndefined();
    expect(byId.get(TOOLS_MODEL)!.hosted_tools).toEqual({
      web_search: { per_call_tokens: 200, max_calls: 3 },
      file_search: { per_call_tokens: 100, max_calls: 2 },
    });
    const page = modelPage(list.body.data);
    expect(page).toContain('<code>web_search</code> (200 tokens a call, at most 3)');
    expect(JSON.stringify(list.body) + page).not.toContain('vs_shared');
  });

  it('holds 20 concurrent hosted-tool requests on a 1,000-token balance to what their reservations cover', async () => {
    // Every answer makes all the calls it may: 3 web searches (600 tokens) on top of 110.
    t.upstream.behave(hostedToolReply(['web_search_call', 'web_search_call', 'web_search_call', 'web_search_call']));
    const key = await keyWithTokens(t.s.store, 1_000);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(key.secret, 'responses', toolsBody({ max_output_tokens: 10, stream: i % 2 === 0 }))),
    );
    await settled(t.proxy);
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const served = results.filter((r) => r.status === 200).length;
    expect(served).toBeGreaterThanOrEqual(1);
    const ledger = await t.s.store.usage({ keyId: key.id, limit: 100 });
    expect(ledger).toHaveLength(served);
    const charged = ledger.reduce((sum, r) => sum + r.chargedTokens, 0);
    expect(charged).toBeLessThanOrEqual(1_000);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ reserved: 0, debt: 0, balance: 1_000 - charged });
  });
});
