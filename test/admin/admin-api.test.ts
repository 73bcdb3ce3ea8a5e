/** The admin API against a real redis-server: every route's success, bad input, wrong token and unknown id. */
import request from 'supertest';
import { PROMPT_TOKENS } from '../helpers/upstream';
import { startProxy, settled, chatBody, MODEL } from '../helpers/proxy';
import { proxyFixture } from '../helpers/fixture';

const ADMIN = 'admin-token-0123456789';
const now = () => Math.floor(Date.now() / 1000);

describe('admin API (redis store)', () => {
  const t = proxyFixture('redis', { env: { ADMIN_TOKEN: ADMIN }, models: [{}, { id: 'acme/other' }] });
  const admin = () => ({
    get: (path: string) => request(t.proxy.url).get(path).set('authorization', `Bearer ${ADMIN}`),
    post: (path: string, body?: object) => request(t.proxy.url).post(path).set('authorization', `Bearer ${ADMIN}`).send(body),
    delete: (path: string) => request(t.proxy.url).delete(path).set('authorization', `Bearer ${ADMIN}`),
  });

  describe('the admin token', () => {
    it.each([
      ['missing', undefined],
      ['wrong', 'Bearer admin-token-0123456780'],
      ['a prefix of the right one', `Bearer ${ADMIN.slice(0, -1)}`],
      ['not Bearer', `Basic ${ADMIN}`],
    ])('refuses a %s token with 401 on every route', async (_what, header) => {
      for (const [method, path] of [
        ['get', '/admin/keys'],
        ['post', '/admin/keys'],
        ['get', '/admin/keys/key_x'],
        ['post', '/admin/keys/key_x/packages'],
        ['delete', '/admin/keys/key_x'],
        ['get', '/admin/usage'],
      ] as const) {
        const req = request(t.proxy.url)[method](path);
        const res = await (header ? req.set('authorization', header) : req);
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('invalid_api_key');
      }
      expect(await t.s.store.listKeys()).toHaveLength(0);
    });

    it('is off entirely without ADMIN_TOKEN', async () => {
      const plain = await startProxy({ store: t.s.store, upstreamUrl: t.upstream.url });
      try {
        const res = await request(plain.url).get('/admin/keys').set('authorization', `Bearer ${ADMIN}`);
        expect(res.status).toBe(404);
      } finally {
        await plain.close();
      }
    });
  });

  describe('POST /admin/keys', () => {
    it('creates a key with a first package and shows the secret once', async () => {
      const expires = now() + 3600;
      const res = await admin().post('/admin/keys', { name: 'alice', tokens: 5000, expires_at: expires, models: [MODEL] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^key_/),
        // A key created without an account gets one of its own.
        account_id: expect.stringMatching(/^acc_/),
        key: expect.stringMatching(/^sk-[A-Za-z0-9_-]{43}$/),
        name: 'alice',
        prefix: res.body.key.slice(0, 10),
        created: expect.any(Number),
        expires_at: expires,
        revoked_at: null,
        models: [MODEL],
        limit_tokens: null,
        spent_tokens: 0,
        last_used: null,
        status: 'active',
        limits: null,
        budget: null,
        balance: 5000,
      });
      const shown = await admin().get(`/admin/keys/${res.body.id}`);
      expect(JSON.stringify(shown.body)).not.toContain(res.body.key);
      const listed = await admin().get('/admin/keys');
      expect(JSON.stringify(listed.body)).not.toContain(res.body.key);
      // The secret works on the proxy, within its model list.
      await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${res.body.key}`).send(chatBody()).expect(200);
      const refused = await request(t.proxy.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${res.body.key}`)
        .send(chatBody({ model: 'acme/other' }));
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('model_not_allowed');
    });

    it('creates a bare key from an empty body', async () => {
      const res = await admin().post('/admin/keys');
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: '', balance: 0, expires_at: null, models: null });
    });

    it.each([
      ['tokens', { tokens: 0 }],
      ['tokens', { tokens: 1.5 }],
      ['tokens', { tokens: '100' }],
      ['name', { name: 7 }],
      ['expires_at', { expires_at: 1000 }],
      ['models', { models: 'acme/chat-small' }],
      ['models', { models: [] }],
      ['models[1]', { models: [MODEL, 'acme/unknown'] }],
      ['token', { token: 100 }],
    ])('refuses bad input with 400 naming %s', async (param, body) => {
      const res = await admin().post('/admin/keys', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request_error', param });
      expect(await t.s.store.listKeys()).toHaveLength(0);
    });
  });

  describe('GET /admin/keys and /admin/keys/:id', () => {
    it('lists keys and shows balance, reservations, packages and usage totals', async () => {
      const a = (await admin().post('/admin/keys', { name: 'a', tokens: 1000 })).body;
      await admin().post('/admin/keys', { name: 'b' });
      const list = await admin().get('/admin/keys');
      expect(list.status).toBe(200);
      expect(list.body.data.map((k: { name: string }) => k.name)).toEqual(['a', 'b']);

      await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${a.key}`).send(chatBody()).expect(200);
      await settled(t.proxy);
      const shown = await admin().get(`/admin/keys/${a.id}`);
      expect(shown.status).toBe(200);
      expect(shown.body).toMatchObject({
        id: a.id,
        balance: 1000 - PROMPT_TOKENS - 5,
        reserved: 0,
        debt: 0,
        packages: [
          {
            id: expect.stringMatching(/^pkg_/),
            tokens: 1000,
            remaining: 1000 - PROMPT_TOKENS - 5,
            expires_at: null,
            created: expect.any(Number),
          },
        ],
        usage: { requests: 1, prompt_tokens: PROMPT_TOKENS, completion_tokens: 5, charged_tokens: PROMPT_TOKENS + 5 },
      });
    });

    it('answers 404 for an unknown id', async () => {
      const res = await admin().get('/admin/keys/key_nope');
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', param: 'id' });
    });
  });

  describe('POST /admin/keys/:id/packages', () => {
    it('grants a package that adds to the balance', async () => {
      const k = (await admin().post('/admin/keys', { tokens: 100 })).body;
      const expires = now() + 86400;
      const res = await admin().post(`/admin/keys/${k.id}/packages`, { tokens: 250, expires_at: expires });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^pkg_/),
        tokens: 250,
        remaining: 250,
        expires_at: expires,
        created: expect.any(Number),
      });
      expect((await admin().get(`/admin/keys/${k.id}`)).body.balance).toBe(350);
    });

    it.each([
      ['tokens', {}],
      ['tokens', { tokens: -5 }],
      ['expires_at', { tokens: 5, expires_at: 'soon' }],
    ])('refuses bad input with 400 naming %s', async (param, body) => {
      const k = (await admin().post('/admin/keys', { tokens: 100 })).body;
      const res = await admin().post(`/admin/keys/${k.id}/packages`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(param);
      expect((await admin().get(`/admin/keys/${k.id}`)).body.balance).toBe(100);
    });

    it('answers 404 for an unknown key', async () => {
      const res = await admin().post('/admin/keys/key_nope/packages', { tokens: 5 });
      expect(res.status).toBe(404);
    });
  });

  describe('DELETE /admin/keys/:id', () => {
    it('revokes: the key’s next request gets 401 at once', async () => {
      const k = (await admin().post('/admin/keys', { tokens: 1000 })).body;
      await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${k.key}`).send(chatBody()).expect(200);
      const res = await admin().delete(`/admin/keys/${k.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: k.id, revoked: true, revoked_at: expect.any(Number) });
      const refused = await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${k.key}`).send(chatBody());
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('invalid_api_key');
    });

    it('answers 404 for an unknown id', async () => {
      expect((await admin().delete('/admin/keys/key_nope')).status).toBe(404);
    });
  });

  describe('GET /admin/usage and the ledger', () => {
    it('says which endpoint each request used', async () => {
      const k = (await admin().post('/admin/keys', { tokens: 100_000 })).body;
      const post = (path: string, body: object) => request(t.proxy.url).post(path).set('authorization', `Bearer ${k.key}`).send(body);
      await post('/v1/chat/completions', chatBody()).expect(200);
      await post('/v1/completions', { model: chatBody().model, prompt: 'Once' }).expect(200);
      await post('/v1/responses', { model: chatBody().model, input: 'Hi' }).expect(200);
      await settled(t.proxy);
      const res = await admin().get(`/admin/usage?key_id=${k.id}`);
      expect(res.body.data.map((r: { endpoint: string }) => r.endpoint)).toEqual(['chat', 'completions', 'responses']);
    });

    it('holds exactly one record per metered request, JSON and stream, summing to the balance drop', async () => {
      const k = (await admin().post('/admin/keys', { tokens: 100_000 })).body;
      const N = 6;
      for (let i = 0; i < N; i++) {
        await request(t.proxy.url)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${k.key}`)
          .send(chatBody({ stream: i % 2 === 1 }))
          .expect(200);
      }
      await settled(t.proxy);
      const res = await admin().get(`/admin/usage?key_id=${k.id}`);
      expect(res.status).toBe(200);
      const records = res.body.data;
      expect(records).toHaveLength(N);
      expect(new Set(records.map((r: { request_id: string }) => r.request_id)).size).toBe(N);
      expect(records.map((r: { stream: boolean }) => r.stream)).toEqual([false, true, false, true, false, true]);
      expect(Object.keys(records[0]).sort()).toEqual(
        [
          'account_id',
          'account_email',
          'cached_tokens',
          'charged_tokens',
          'completion_tokens',
          'created',
          'cursor',
          'endpoint',
          'estimated',
          'key_id',
          'key_name',
          'model',
          'prompt_tokens',
          'reasoning_tokens',
          'request_id',
          'status',
          'stream',
        ].sort(),
      );
      const charged = records.reduce((sum: number, r: { charged_tokens: number }) => sum + r.charged_tokens, 0);
      expect(100_000 - (await admin().get(`/admin/keys/${k.id}`)).body.balance).toBe(charged);

      // Incremental reading: after the 2nd record's cursor, the rest, oldest first.
      const rest = await admin().get(`/admin/usage?key_id=${k.id}&after=${records[1].cursor}&limit=3`);
      expect(rest.body.data.map((r: { request_id: string }) => r.request_id)).toEqual(
        records.slice(2, 5).map((r: { request_id: string }) => r.request_id),
      );
      // Paging back: before the 4th record's cursor, the newest two before it, oldest first.
      const older = await admin().get(`/admin/usage?key_id=${k.id}&before=${records[3].cursor}&limit=2`);
      expect(older.body.data.map((r: { request_id: string }) => r.request_id)).toEqual(
        records.slice(1, 3).map((r: { request_id: string }) => r.request_id),
      );
    });

    it('filters by model, time and limit across keys', async () => {
      const a = (await admin().post('/admin/keys', { tokens: 10_000 })).body;
      const b = (await admin().post('/admin/keys', { tokens: 10_000 })).body;
      await request(t.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${a.key}`).send(chatBody()).expect(200);
      await request(t.proxy.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${b.key}`)
        .send(chatBody({ model: 'acme/other' }))
        .expect(200);
      await settled(t.proxy);
      expect((await admin().get('/admin/usage')).body.data).toHaveLength(2);
      expect((await admin().get('/admin/usage?model=acme/other')).body.data.map((r: { key_id: string }) => r.key_id)).toEqual([b.id]);
      expect((await admin().get(`/admin/usage?since=${now() + 100}`)).body.data).toHaveLength(0);
      expect((await admin().get('/admin/usage?limit=1')).body.data).toHaveLength(1);
    });

    it.each([
      ['limit', 'limit=0'],
      ['limit', 'limit=5000'],
      ['since', 'since=yesterday'],
      ['after', 'after=notacursor&key_id=key_x'],
      ['after', 'after=1-0'],
      ['before', 'before=yesterday&key_id=key_x'],
      ['before', 'before=1-0'],
      ['colour', 'colour=blue'],
    ])('refuses a bad query with 400 naming %s', async (param, qs) => {
      const res = await admin().get(`/admin/usage?${qs}`);
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(param);
    });
  });
});
