/**
 * GET /admin/keys?search=&account_id=&limit=: the console's key filter finds a key by what an operator sees (its
 * name or prefix), on both stores; a bad query is refused in the API's shape.
 */
import request from 'supertest';
import { proxyFixture } from '../helpers/fixture';

const ADMIN = 'admin-token-0123456789';

describe.each(['memory', 'redis'] as const)('admin API: searching keys (%s store)', (kind) => {
  const t = proxyFixture(kind, { env: { ADMIN_TOKEN: ADMIN } });
  const get = (path: string) => request(t.proxy.url).get(path).set('authorization', `Bearer ${ADMIN}`);
  const post = (path: string, body: object) => request(t.proxy.url).post(path).set('authorization', `Bearer ${ADMIN}`).send(body);

  it('finds keys by part of the name or prefix (any case), within one account or all, at most `limit`', async () => {
    const a = (await post('/admin/accounts', { email: 'search-a@example.org' }).expect(201)).body.id;
    const b = (await post('/admin/accounts', { email: 'search-b@example.org' }).expect(201)).body.id;
    const made = async (account: string, name: string) => (await post(`/admin/accounts/${account}/keys`, { name }).expect(201)).body;
    const notebook = await made(a, 'Research Notebook');
    const batch = await made(a, 'nightly batch');
    const other = await made(b, 'notebook of b');

    const ids = async (query: string) =>
      ((await get(`/admin/keys?${query}`).expect(200)).body.data as { id: string }[]).map((k) => k.id).sort();
    expect(await ids('search=NOTEBOOK')).toEqual([notebook.id, other.id].sort());
    expect(await ids(`search=notebook&account_id=${a}`)).toEqual([notebook.id]);
    expect(await ids(`search=${encodeURIComponent(batch.prefix)}`)).toEqual([batch.id]);
    expect(await ids(`account_id=${b}`)).toEqual([other.id]);
    expect(await ids('search=no-such-key')).toEqual([]);
    expect(await ids('search=notebook&limit=1')).toHaveLength(1);
    // Unfiltered, it lists every key as before.
    expect(await ids('')).toEqual([notebook.id, batch.id, other.id].sort());
  });

  it('refuses a bad limit or an unknown parameter with an invalid_request_error', async () => {
    for (const query of ['limit=0', 'limit=many', 'prefix=sk']) {
      const res = await get(`/admin/keys?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.any(String) });
    }
  });
});
