/** Non-streamed completions through the proxy: forwarded as the upstream must see them, answered and charged once. */
import request from 'supertest';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { jsonReply, PROMPT_TOKENS, words } from '../helpers/upstream';
import { startProxy, settled, chatBody, MODEL, UPSTREAM_MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

describe.each(storeKinds)('JSON completions (%s store)', (kind) => {
  const t = proxyFixture(kind, { env: { UPSTREAM_API_KEY: 'upstream-secret' } });

  it('forwards with the upstream model name and our credentials, answers with the client model id, and charges usage', async () => {
    const key = await keyWithTokens(t.s.store, 10_000);
    const res = await request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(chatBody({ max_tokens: 50, seed: 7, user: 'u1' }));
    expect(res.status).toBe(200);
    expect(res.body.model).toBe(MODEL);
    expect(res.body.choices[0].message.content).toBe(words(5).join(''));
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    const call = t.upstream.calls[0];
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.body.model).toBe(UPSTREAM_MODEL);
    expect(call.body).toMatchObject({ max_tokens: 50, seed: 7, user: 'u1' });
    expect(call.headers.authorization).toBe('Bearer upstream-secret');
    expect(call.headers['accept-encoding']).toBe('identity');
    expect(JSON.stringify(call)).not.toContain(key.secret);

    await settled(t.proxy);
    const state = await t.s.store.getKey(key.id);
    expect(state).toMatchObject({ balance: 10_000 - (PROMPT_TOKENS + 5), reserved: 0 });
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({
      model: MODEL,
      promptTokens: PROMPT_TOKENS,
      completionTokens: 5,
      chargedTokens: PROMPT_TOKENS + 5,
      estimated: false,
      stream: false,
      status: 200,
    });
    expect(record.requestId).toBe(res.headers['x-request-id']);
  });

  it('sends no Authorization upstream when no upstream key is configured', async () => {
    const bare = await startProxy({ store: t.s.store, upstreamUrl: t.upstream.url });
    try {
      const key = await keyWithTokens(t.s.store, 10_000);
      await request(bare.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key.secret}`)
        .set('x-api-key', key.secret)
        .send(chatBody())
        .expect(200);
      expect(t.upstream.calls[0].headers.authorization).toBeUndefined();
      expect(JSON.stringify(t.upstream.calls[0].headers)).not.toContain(key.secret);
    } finally {
      await bare.close();
    }
  });

  it('caps max_tokens to the model default when the client names none, and lowers it to what the balance covers', async () => {
    const rich = await keyWithTokens(t.s.store, 100_000);
    await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${rich.secret}`).send(chatBody()).expect(200);
    expect(t.upstream.calls[0].body.max_tokens).toBe(1024);

    const poor = await keyWithTokens(t.s.store, 40);
    await request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${poor.secret}`)
      .send(chatBody({ max_tokens: 500 }))
      .expect(200);
    const lowered = t.upstream.calls[1].body.max_tokens;
    expect(lowered).toBeGreaterThan(0);
    expect(lowered).toBeLessThan(40);
    await settled(t.proxy);
    expect((await t.s.store.getKey(poor.id))!.balance).toBeGreaterThanOrEqual(0);
  });

  it('lowers the cap in both chat fields when the client used max_completion_tokens', async () => {
    const poor = await keyWithTokens(t.s.store, 40);
    await request(t.proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${poor.secret}`)
      .send(chatBody({ max_completion_tokens: 500 }))
      .expect(200);
    expect(t.upstream.calls[0].body.max_completion_tokens).toBeLessThan(40);
    expect(t.upstream.calls[0].body.max_tokens).toBe(t.upstream.calls[0].body.max_completion_tokens);
  });

  it('estimates usage with the tokenizer when the upstream reports none, and marks it estimated', async () => {
    t.upstream.behave(jsonReply({ tokens: ['Hello', ' world'], usage: false }));
    const key = await keyWithTokens(t.s.store, 10_000);
    await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody()).expect(200);
    await settled(t.proxy);
    const [record] = await t.s.store.usage({ keyId: key.id, limit: 10 });
    expect(record.estimated).toBe(true);
    expect(record.completionTokens).toBe(2);
    expect(record.promptTokens).toBeGreaterThan(3);
    expect((await t.s.store.getKey(key.id))!.balance).toBe(10_000 - record.chargedTokens);
  });

  it('refuses with 429 insufficient_quota, forwarding nothing, when the balance cannot cover the prompt', async () => {
    const key = await keyWithTokens(t.s.store, 5);
    const res = await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(res.headers['x-should-retry']).toBe('false');
    expect(t.upstream.calls).toHaveLength(0);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: 5, reserved: 0 });
  });

  it('says the debt when an answer cost more than was reserved: the balance header, then a 429 with balance -N', async () => {
    const key = await keyWithTokens(t.s.store, 100);
    // The upstream counts the prompt far above our bound: the request overdraws the balance, once.
    t.upstream.behave(jsonReply({ promptTokens: 500 }));
    const send = () => request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.headers['x-tokenmeter-balance-tokens']).toBe('-405');
    await settled(t.proxy);
    expect(await t.s.store.getKey(key.id)).toMatchObject({ balance: -405, debt: 405 });
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('insufficient_quota');
    expect(refused.body.error.message).toBe(
      "This account's token balance is -405: it is in debt, which the next token package pays first; buy a token package.",
    );
  });
});
