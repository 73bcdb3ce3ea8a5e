/**
 * A stored prompt (`prompt: {id, version, variables}` on /v1/responses) is refused unless the model's `stored_prompts`
 * lists them; then its declared size is reserved and the hosted tools its templates may carry are bounded, reserved
 * and charged per call the answer reports, like tools the request names.
 */
import request from 'supertest';
import { buildCatalog } from '../../src/catalog/models';
import { hostedToolReply } from '../helpers/hosted-tool-replies';
import { proxyFixture } from '../helpers/fixture';
import { MODEL, settled } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';

const SEARCHING = 'acme/model-1';
const PLAIN = 'acme/model-2';
const models = [
  {},
  {
    hosted_tools: { web_search: { per_call_tokens: 1_000, max_calls: 3 } },
    stored_prompts: { reserve_tokens: 2_000, hosted_tools: ['web_search'] },
  },
  { stored_prompts: { reserve_tokens: 500 } },
];
const prompt = { id: 'pmpt_support', version: '2', variables: { customer: 'Ada' } };

describe('stored prompts', () => {
  const t = proxyFixture('redis', { models });
  const post = (secret: string, body: object) =>
    request(t.proxy.url)
      .post('/v1/responses')
      .set('authorization', `Bearer ${secret}`)
      .send({ input: 'Help.', prompt, ...body });

  it('are refused by default: a 400 naming prompt, nothing forwarded or held', async () => {
    const k = await keyWithTokens(t.s.store, 10_000);
    const asks = t.upstream.calls.length;
    const res = await post(k.secret, { model: MODEL });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'prompt' });
    expect(t.upstream.calls.length).toBe(asks);
    expect(await t.s.store.getKey(k.id)).toMatchObject({ balance: 10_000, reserved: 0 });
  });

  it("reserve the template's declared size and its tools' calls, and charge each hosted call the answer reports", async () => {
    t.upstream.behave(hostedToolReply(['web_search_call', 'web_search_call', 'web_search_call']));
    // 2,000 for the template and 3 × 1,000 for its searches do not fit 4,000: refused before anything is forwarded.
    const short = await keyWithTokens(t.s.store, 4_000);
    const asks = t.upstream.calls.length;
    expect((await post(short.secret, { model: SEARCHING })).body.error?.code).toBe('insufficient_quota');
    expect(t.upstream.calls.length).toBe(asks);

    const k = await keyWithTokens(t.s.store, 10_000);
    const res = await post(k.secret, { model: SEARCHING, max_output_tokens: 50 });
    expect(res.status).toBe(200);
    expect(t.upstream.calls.at(-1)!.body).toMatchObject({ prompt, max_tool_calls: 3 });
    await settled(t.proxy);
    // 100 in, 10 out, and three searches at 1,000 each.
    expect(res.headers['x-tokenmeter-tool-tokens']).toBe('3000');
    expect(await t.s.store.getKey(k.id)).toMatchObject({ balance: 10_000 - 3_110, reserved: 0 });
  });

  it('let a template run no hosted tool the models file does not list for them', async () => {
    t.upstream.behave(hostedToolReply(['web_search_call']));
    const k = await keyWithTokens(t.s.store, 10_000);
    const res = await post(k.secret, { model: PLAIN });
    expect(res.status).toBe(200);
    expect(t.upstream.calls.at(-1)!.body.max_tool_calls).toBe(0);
    // Nothing reported beyond the usage: 110 charged. Without a stored prompt nothing is sent in max_tool_calls.
    await settled(t.proxy);
    expect(await t.s.store.getKey(k.id)).toMatchObject({ balance: 10_000 - 110, reserved: 0 });
    await post(k.secret, { model: PLAIN, prompt: undefined });
    expect(t.upstream.calls.at(-1)!.body.max_tool_calls).toBeUndefined();
  });

  it("refuses a file named in a variable, and a models file pricing none of a template's tools", async () => {
    const k = await keyWithTokens(t.s.store, 10_000);
    const file = { ...prompt, variables: { doc: { type: 'input_file', file_id: 'file_other' } } };
    const res = await post(k.secret, { model: PLAIN, prompt: file });
    expect(res.status).toBe(404);
    expect(res.body.error.param).toBe('prompt.variables.doc.file_id');
    const entry = {
      id: 'acme/m',
      context_length: 8192,
      max_output_tokens: 1024,
      stored_prompts: { reserve_tokens: 10, hosted_tools: ['web_search'] },
    };
    expect(() =>
      buildCatalog({ models: [entry], upstreams: [] }, { upstreamUrl: 'http://127.0.0.1:1/v1', upstreamApiKey: undefined, env: {} }),
    ).toThrow('model acme/m: stored_prompts.hosted_tools names web_search, which hosted_tools does not allow');
  });
});
