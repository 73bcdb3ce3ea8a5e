/**
 * The shapes in src/api/ are what the APIs send: every answer of the admin API, the self-service API and /v1/models,
 * read back through its schema, which refuses a field more or less (strict objects) or of another type.
 */
import request from 'supertest';
import type { z } from 'zod';
import * as api from '../../src/api';
import { ADMIN_TOKEN, accountWithPassword, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { chatBody, MODEL, settled } from '../helpers/proxy';
import { eventually } from '../helpers/eventually';

/** The body, checked against the schema; a mismatch fails with zod's account of it. */
function shaped<T extends z.ZodType>(schema: T, res: { status: number; body: unknown }, status = 200): z.infer<T> {
  expect(res.status).toBe(status);
  const parsed = schema.safeParse(res.body);
  if (!parsed.success) throw new Error(`${JSON.stringify(res.body)}\n${parsed.error.message}`);
  return parsed.data;
}

describe('the API answers in the shapes src/api/ defines', () => {
  let c: ConsoleFixture;
  const admin = {
    get: (path: string) => request(c.proxy.url).get(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
    post: (path: string, body: object = {}) => request(c.proxy.url).post(path).set('authorization', `Bearer ${ADMIN_TOKEN}`).send(body),
    patch: (path: string, body: object) => request(c.proxy.url).patch(path).set('authorization', `Bearer ${ADMIN_TOKEN}`).send(body),
    delete: (path: string) => request(c.proxy.url).delete(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
  };
  beforeAll(async () => {
    c = await startConsole('memory');
  });
  afterAll(async () => {
    await c.close();
  });

  it('the admin API: accounts, keys, packages, usage, products, codes', async () => {
    const limits = { rpm: 60, max_concurrent: 2 };
    const account = shaped(
      api.createdAccountSchema,
      await admin.post('/admin/accounts', { email: 'a@example.org', tokens: 1000, limits }),
      201,
    );
    shaped(api.accountPageSchema, await admin.get('/admin/accounts'));
    shaped(api.accountSchema, await admin.patch(`/admin/accounts/${account.id}`, { name: 'A' }));
    shaped(api.packageSchema, await admin.post(`/admin/accounts/${account.id}/packages`, { tokens: 10, expires_at: 4_000_000_000 }), 201);
    const key = shaped(api.createdKeySchema, await admin.post(`/admin/accounts/${account.id}/keys`, { name: 'k', limits }), 201);
    shaped(api.createdKeySchema, await admin.post('/admin/keys', { name: 'alone', tokens: 5, models: [MODEL] }), 201);
    shaped(api.keyListSchema, await admin.get(`/admin/accounts/${account.id}/keys`));
    shaped(api.keyListSchema, await admin.get('/admin/keys'));
    shaped(api.keySchema, await admin.patch(`/admin/keys/${key.id}`, { limits: { tpm: 10_000 } }));
    shaped(api.packageSchema, await admin.post(`/admin/keys/${key.id}/packages`, { tokens: 10 }), 201);

    await request(c.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.key}`).send(chatBody()).expect(200);
    await settled(c.proxy);
    const shown = shaped(api.accountShowSchema, await admin.get(`/admin/accounts/${account.id}`));
    expect(shown.limit_use).not.toBeNull();
    expect(shaped(api.keyDetailSchema, await admin.get(`/admin/keys/${key.id}`)).limit_use).not.toBeNull();
    expect(shaped(api.operatorUsageListSchema, await admin.get(`/admin/usage?account_id=${account.id}`)).data).toHaveLength(1);
    shaped(api.revokedKeySchema, await admin.delete(`/admin/keys/${key.id}`));

    shaped(api.productSchema, await admin.post('/admin/products', { id: 'p', name: 'P', tokens: 100, valid_days: 30, price: 500 }), 201);
    shaped(api.productSchema, await admin.patch('/admin/products/p', { price: 600 }));
    shaped(api.productListSchema, await admin.get('/admin/products'));
    shaped(api.generatedCodeListSchema, await admin.post('/admin/redemption-codes', { product_id: 'p', count: 2 }), 201);
    shaped(api.codeListSchema, await admin.get('/admin/redemption-codes'));
  });

  it('the self-service API: login, me, keys, usage, products, redeem, models, logout', async () => {
    const holder = new Browser(c.proxy.url);
    await accountWithPassword(c.s.store, 'holder@example.org');
    shaped(api.ownAccountSchema, await holder.login('holder@example.org'));
    const code = (await admin.post('/admin/redemption-codes', { tokens: 500 })).body.data[0].code as string;
    shaped(api.packageSchema, await holder.call('post', '/console/api/redeem', { code }), 201);
    const key = shaped(api.createdOwnKeySchema, await holder.call('post', '/console/api/keys', { name: 'k', limits: { rpm: 5 } }), 201);
    await request(c.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.key}`).send(chatBody()).expect(200);
    await settled(c.proxy);

    shaped(api.meSchema, await holder.call('get', '/console/api/me'));
    shaped(api.ownKeyListSchema, await holder.call('get', '/console/api/keys'));
    expect(shaped(api.usageListSchema, await holder.call('get', '/console/api/usage')).data).toHaveLength(1);
    // The daily rows follow the ledger (the rollup follower, about a second after settlement).
    await eventually(
      async () => {
        expect(shaped(api.dailyUsageListSchema, await holder.call('get', '/console/api/usage/daily')).data).toHaveLength(1);
      },
      10_000,
      'the rollup follower to add the record',
    );
    shaped(api.shopSchema, await holder.call('get', '/console/api/products'));
    shaped(api.modelListSchema, await holder.call('get', '/console/api/models'));
    shaped(api.deletedKeySchema, await holder.call('delete', `/console/api/keys/${key.id}`));
    shaped(api.loggedOutSchema, await holder.call('post', '/console/api/logout', {}));
  });

  it('/v1/models: the list and one model', async () => {
    const key = (await admin.post('/admin/keys', { tokens: 5 })).body.key as string;
    shaped(api.modelListSchema, await request(c.proxy.url).get('/v1/models').set('authorization', `Bearer ${key}`));
    shaped(api.modelSchema, await request(c.proxy.url).get(`/v1/models/${MODEL}`).set('authorization', `Bearer ${key}`));
  });
});
