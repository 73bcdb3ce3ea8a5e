/**
 * Key and account limits through the proxy and the admin API: set at creation and later, shown with their use,
 * refusing with a 429 that names the level, and the headers reporting the tightest level.
 */
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';
import { chatBody, settled } from '../helpers/proxy';
import { keyWithTokens, storeKinds } from '../helpers/stores';
import { defaultReply, streamReply } from '../helpers/upstream';
import { eventually } from '../helpers/eventually';

const ADMIN = 'limits-admin-token-0123';

describe.each(storeKinds)('key and account limits (%s store)', (kind) => {
  const t = proxyFixture(kind, { env: { ADMIN_TOKEN: ADMIN }, models: [{}, { id: 'acme/limited', limits: { rpm: 100, tpm: 1_000_000 } }] });
  const admin = {
    get: (path: string) => request(t.proxy.url).get(path).set('authorization', `Bearer ${ADMIN}`),
    post: (path: string, body: object) => request(t.proxy.url).post(path).set('authorization', `Bearer ${ADMIN}`).send(body),
    patch: (path: string, body: object) => request(t.proxy.url).patch(path).set('authorization', `Bearer ${ADMIN}`).send(body),
  };
  const post = (secret: string, body: object = chatBody()) =>
    request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(body);

  it('takes limits at key creation, shows them with their use, and refuses past them naming the key', async () => {
    const created = await admin.post('/admin/keys', { tokens: 100_000, limits: { rpm: 2, max_concurrent: 5 } });
    expect(created.status).toBe(201);
    expect(created.body.limits).toEqual({ rpm: 2, max_concurrent: 5 });
    const secret = created.body.key as string;
    const first = await post(secret).expect(200);
    expect(first.headers['x-ratelimit-limit-requests']).toBe('2');
    expect(first.headers['x-ratelimit-remaining-requests']).toBe('1');
    expect(first.headers['x-ratelimit-limit-tokens']).toBeUndefined();
    await post(secret).expect(200);
    const refused = await post(secret);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests' });
    expect(refused.body.error.message).toMatch(/^Rate limit reached for requests per minute on this key: limit 2, used 2\./);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['x-should-retry']).toBeUndefined();
    expect(t.upstream.calls).toHaveLength(2);
    await settled(t.proxy);
    const shown = await admin.get(`/admin/keys/${created.body.id}`).expect(200);
    expect(shown.body.limits).toEqual({ rpm: 2, max_concurrent: 5 });
    expect(shown.body.limit_use).toEqual({
      requests: { limit: 2, remaining: 0, reset_ms: expect.any(Number) },
      concurrent: { limit: 5, in_flight: 0 },
    });
    expect(shown.body.usage.requests).toBe(2);
    expect(shown.body.reserved).toBe(0);
  });

  it('changes a key’s limits later, from its next request; null removes them', async () => {
    const created = await admin.post('/admin/keys', { tokens: 100_000 });
    const secret = created.body.key as string;
    const free = await post(secret).expect(200);
    expect(Object.keys(free.headers).filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
    const patched = await admin.patch(`/admin/keys/${created.body.id}`, { limits: { rpm: 1 } });
    expect(patched.status).toBe(200);
    expect(patched.body.limits).toEqual({ rpm: 1 });
    await post(secret).expect(200);
    expect((await post(secret)).status).toBe(429);
    await admin.patch(`/admin/keys/${created.body.id}`, { limits: null }).expect(200);
    await post(secret).expect(200);
    expect((await admin.get(`/admin/keys/${created.body.id}`)).body).toMatchObject({ limits: null, limit_use: null });
  });

  it('refuses bad limits with a 400 naming the field, and an unknown key with 404', async () => {
    const bad = await admin.post('/admin/keys', { tokens: 10, limits: { rpm: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('limits.rpm');
    const unknownField = await admin.post('/admin/keys', { limits: { rps: 5 } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.param).toBe('limits.rps');
    const missing = await admin.patch('/admin/keys/key_missing', { limits: { rpm: 1 } });
    expect(missing.status).toBe(404);
    expect(await t.s.store.listKeys()).toHaveLength(0);
  });

  it('refuses past an account limit shared by its keys, naming the account; tpm counts reservations, then charges', async () => {
    const first = await keyWithTokens(t.s.store, 100_000);
    const second = await keyWithTokens(t.s.store, 0, { accountId: first.accountId });
    await t.s.store.updateAccount(first.accountId, { limits: { tpm: 1_500 } });
    let finish!: () => void;
    t.upstream.behave(streamReply({ holdAfterFirst: new Promise<void>((r) => (finish = r)) }));
    // While the first key's stream runs, the account counts its whole reservation (prompt plus 1,000).
    const running = post(first.secret, chatBody({ max_tokens: 1_000, stream: true })).then((r) => r);
    await eventually(async () => expect(t.upstream.calls).toHaveLength(1));
    const refused = await post(second.secret, chatBody({ max_tokens: 1_000 }));
    expect(refused.status).toBe(429);
    expect(refused.body.error.type).toBe('tokens');
    expect(refused.body.error.message).toMatch(
      /^Rate limit reached for tokens per minute on this account: limit 1500, used 10\d\d, requested 10\d\d\./,
    );
    finish();
    expect((await running).status).toBe(200);
    t.upstream.behave(defaultReply);
    // Settled, it counts what it was charged: the second key's request now fits.
    await settled(t.proxy);
    const ok = await post(second.secret, chatBody({ max_tokens: 1_000 })).expect(200);
    expect(ok.headers['x-ratelimit-limit-tokens']).toBe('1500');
    expect(t.upstream.calls).toHaveLength(2);
  });

  it('takes account limits at creation and later through the admin API, and shows them with their use', async () => {
    const created = await admin.post('/admin/accounts', { name: 'team', tokens: 100_000, limits: { rpm: 2, max_concurrent: 3 } });
    expect(created.status).toBe(201);
    expect(created.body.limits).toEqual({ rpm: 2, max_concurrent: 3 });
    const key = await admin.post(`/admin/accounts/${created.body.id}/keys`, { limits: { tpm: 50_000 } });
    expect(key.body.limits).toEqual({ tpm: 50_000 });
    await post(key.body.key).expect(200);
    const shown = await admin.get(`/admin/accounts/${created.body.id}`).expect(200);
    expect(shown.body.limit_use).toEqual({
      requests: { limit: 2, remaining: 1, reset_ms: expect.any(Number) },
      concurrent: { limit: 3, in_flight: expect.any(Number) },
    });
    const patched = await admin.patch(`/admin/accounts/${created.body.id}`, { limits: { rpm: 1 } });
    expect(patched.body.limits).toEqual({ rpm: 1 });
    const refused = await post(key.body.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/on this account: limit 1, used 1\./);
    await admin.patch(`/admin/accounts/${created.body.id}`, { limits: null }).expect(200);
    await post(key.body.key).expect(200);
    const bad = await admin.patch(`/admin/accounts/${created.body.id}`, { limits: { max_concurrent: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('limits.max_concurrent');
  });

  it('lowers max_tokens to what tpm admits when the client named none, and refuses a larger one for good', async () => {
    const key = await keyWithTokens(t.s.store, 100_000, { limits: { tpm: 300 } });
    await post(key.secret).expect(200);
    const sent = t.upstream.calls[0].body.max_tokens as number;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(300);
    const tooLarge = await post(key.secret, chatBody({ max_tokens: 1_000 }));
    expect(tooLarge.status).toBe(429);
    expect(tooLarge.body.error.message).toMatch(/^Request too large for tokens per minute on this key: limit 300, requested \d+\./);
    // It can never pass, so the SDKs are told not to retry it.
    expect(tooLarge.headers['x-should-retry']).toBe('false');
    expect(t.upstream.calls).toHaveLength(1);
  });

  it('reports the tightest level in the headers: the key’s requests, the model’s tokens', async () => {
    const key = await keyWithTokens(t.s.store, 100_000, { limits: { rpm: 10, tpm: 5_000_000 } });
    const res = await post(key.secret, chatBody({ model: 'acme/limited', max_tokens: 10 })).expect(200);
    expect(res.headers['x-ratelimit-limit-requests']).toBe('10');
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('9');
    expect(res.headers['x-ratelimit-limit-tokens']).toBe('1000000');
  });

  it('undoes the model admission when the key refuses', async () => {
    const key = await keyWithTokens(t.s.store, 100_000, { limits: { rpm: 1 } });
    await post(key.secret, chatBody({ model: 'acme/limited' })).expect(200);
    expect((await post(key.secret, chatBody({ model: 'acme/limited' }))).status).toBe(429);
    expect((await t.s.store.modelUse('acme/limited', { rpm: 100 })).requests?.remaining).toBe(99);
  });
});
