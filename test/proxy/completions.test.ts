/** POST /v1/completions on the metered pipeline: forwarded with a cap the reservation covers, answered, charged once. */
import request from 'supertest';
import { TOKENS_PER_TEXT, completionsReply } from '../helpers/endpoint-replies';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { words } from '../helpers/upstream';
import { settled, MODEL, UPSTREAM_MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

const body = (over: Record<string, unknown> = {}) => ({ model: MODEL, prompt: 'Once upon a time', ...over });

describe.each(storeKinds)('completions (%s store)', (kind) => {
  const t = proxyFixture(kind);
  const post = (secret: string, b: object) => request(t.proxy.url).post('/v1/completions').set('authorization', `Bearer ${secret}`).send(b);

  it("sends OpenAI's default of 16 as max_tokens when none is named, answers with the client's model id and charges usage", async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body());
    expect(res.status).toBe(200);
    expect(res.body.model).toBe(MODEL);
    expect(res.body.choices[0].text).toBe(words(5).join(''));
    const call = t.upstream.calls[0];
    expect(call.path).toBe('/v1/completions');
    expect(call.body).toMatchObject({ model: UPSTREAM_MODEL, max_tokens: 16, prompt: 'Once upon a time' });
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000 - (TOKENS_PER_TEXT + 5), reserved: 0 });
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({ endpoint: 'completions', promptTokens: TOKENS_PER_TEXT, completionTokens: 5, stream: false });
  });

  it('reserves for best_of completions of every prompt, and charges what the upstream reports', async () => {
    // 2 prompts × best_of 3 = 6 completions per output token; the prompts' bound is their 4 bytes. A balance of 60
    // covers (60 - 4) / 6 = 9 tokens each: the cap the upstream gets. A balance under 2 + 6 (counted exactly) covers none.
    const b = body({ prompt: ['ab', 'cd'], n: 2, best_of: 3, max_tokens: 10 });
    const poor = await keyWithTokens(t.s.store, 7);
    const refused = await post(poor.secret, b);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('insufficient_quota');
    expect(t.upstream.calls).toHaveLength(0);

    const key = await keyWithTokens(t.s.store, 60);
    const res = await post(key.secret, b);
    expect(res.status).toBe(200);
    expect(res.body.choices).toHaveLength(4);
    expect(t.upstream.calls[0].body.max_tokens).toBe(9);
    await settled(t.proxy);
    // The upstream generated best_of (3) per prompt and reported 2 × 3 × 5 completion tokens.
    expect(60 - (await t.s.store.getKey(key.id))!.balance).toBe(2 * TOKENS_PER_TEXT + 30);
  });

  it('accepts token-array prompts and lowers max_tokens to what the balance covers', async () => {
    const key = await keyWithTokens(t.s.store, 20);
    const res = await post(
      key.secret,
      body({
        prompt: [
          [1, 2, 3],
          [4, 5],
        ],
        max_tokens: 100,
      }),
    );
    expect(res.status).toBe(200);
    // The token arrays are exact (5 tokens); 15 left for 2 prompts' completions: 7 each.
    expect(t.upstream.calls[0].body.max_tokens).toBe(7);
  });

  it('hides the usage chunk it asked for from a stream whose client did not ask, and charges it', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body({ stream: true }));
    expect(res.status).toBe(200);
    expect(t.upstream.calls[0].body.stream_options).toEqual({ include_usage: true });
    expect(res.text).not.toContain('"usage":{');
    expect(res.text).not.toContain(UPSTREAM_MODEL);
    expect(res.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record).toMatchObject({
      endpoint: 'completions',
      promptTokens: TOKENS_PER_TEXT,
      completionTokens: 5,
      stream: true,
      estimated: false,
    });
  });

  it('passes the usage chunk to a client that asked for it', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body({ stream: true, stream_options: { include_usage: true } }));
    expect(res.text).toContain(`"usage":{"prompt_tokens":${TOKENS_PER_TEXT}`);
  });

  it('counts a stream whose upstream reports no usage with the tokenizer', async () => {
    t.upstream.behave(completionsReply({ usage: false }));
    const key = await keyWithTokens(t.s.store, 10_000);
    await post(key.secret, body({ stream: true })).expect(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 1 });
    expect(record.estimated).toBe(true);
    expect(record.completionTokens).toBeGreaterThan(0);
  });

  it.each([
    [{ best_of: 1, n: 2 }, 'best_of'],
    [{ logprobs: 6 }, 'logprobs'],
    [{ temperature: 2.5 }, 'temperature'],
    [{ prompt: [] }, 'prompt'],
    [{ prompt: undefined }, 'prompt'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: 5000 }, 'max_tokens'],
  ])('refuses %j naming %s, forwarding and charging nothing', async (over, param) => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await post(key.secret, body(over));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(t.upstream.calls).toHaveLength(0);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 10_000, reserved: 0 });
  });
});

describe('a model that does not serve completions', () => {
  const t = proxyFixture('memory', { models: [{ endpoints: ['chat'] }] });

  it('is refused with a 400 naming the model and the endpoint', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await request(t.proxy.url).post('/v1/completions').set('authorization', `Bearer ${key.secret}`).send(body());
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('model');
    expect(res.body.error.message).toContain(`'${MODEL}' does not serve /v1/completions; it serves /v1/chat/completions`);
    expect(t.upstream.calls).toHaveLength(0);
  });
});
