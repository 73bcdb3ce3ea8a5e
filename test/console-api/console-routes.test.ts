/** The console's keys, usage and operator routes: an account sees and touches only its own; operators need role admin. */
import { createLogger } from '../../src/observability/logger';
import { accountWithPassword, Browser, startConsole, type ConsoleFixture } from '../helpers/console';

describe('console routes', () => {
  let c: ConsoleFixture;
  let ada: Browser;
  let bob: Browser;
  beforeAll(async () => {
    c = await startConsole('memory');
    await accountWithPassword(c.s.store, 'ada@example.org');
    await accountWithPassword(c.s.store, 'bob@example.org');
    await accountWithPassword(c.s.store, 'root@example.org', 'admin');
    ada = new Browser(c.proxy.url);
    bob = new Browser(c.proxy.url);
    await ada.login('ada@example.org');
    await bob.login('bob@example.org');
  });
  afterAll(async () => {
    await c.close();
  });

  it('tenant isolation: another account’s key id is 404 for delete and usage, exactly like a missing one', async () => {
    const key = (await ada.call('post', '/console/api/keys', { name: 'mine' })).body;
    const theirs = await bob.call('delete', `/console/api/keys/${key.id}`);
    const missing = await bob.call('delete', '/console/api/keys/key_missing');
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect((await bob.call('get', `/console/api/usage?key_id=${key.id}`)).status).toBe(404);
    expect((await bob.call('get', '/console/api/keys')).body.data).toEqual([]);
    expect((await ada.call('get', '/console/api/keys')).body.data[0].revoked_at).toBeNull();

    const deleted = await ada.call('delete', `/console/api/keys/${key.id}`);
    expect(deleted.body).toEqual({ id: key.id, deleted: true });
    expect((await ada.call('get', '/console/api/keys')).body.data[0].revoked_at).toBeGreaterThan(0);
  });

  it('validates a new key: unknown models and bad caps get a 400 naming the field', async () => {
    expect((await ada.call('post', '/console/api/keys', { name: 'x', models: ['no/such-model'] })).body.error.param).toBe('models[0]');
    expect((await ada.call('post', '/console/api/keys', { name: 'x', limit_tokens: 0 })).body.error.param).toBe('limit_tokens');
    expect((await ada.call('post', '/console/api/keys', {})).body.error.param).toBe('name');
  });

  it('lists the models a key may be limited to, the same objects as /v1/models, to a session only', async () => {
    const models = await ada.call('get', '/console/api/models');
    expect(models.status).toBe(200);
    const key = (await ada.call('post', '/console/api/keys', { name: 'models' })).body;
    const v1 = await fetch(`${c.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(models.body).toEqual(await v1.json());
    expect(models.body.data.length).toBeGreaterThan(0);
    expect((await new Browser(c.proxy.url).call('get', '/console/api/models')).status).toBe(401);
  });

  it('refuses bad usage queries with a 400', async () => {
    expect((await ada.call('get', '/console/api/usage?limit=0')).body.error.param).toBe('limit');
    expect((await ada.call('get', '/console/api/usage/daily?days=400')).body.error.param).toBe('days');
    expect((await ada.call('get', '/console/api/usage/daily')).body).toEqual({ data: [] });
  });

  it('privilege escalation: a member cannot reach the operator routes; an admin session can, without the token', async () => {
    const member = await ada.call('get', '/console/api/admin/products');
    expect(member.status).toBe(403);
    expect(member.body.error.code).toBe('admin_required');
    expect((await ada.call('post', '/console/api/admin/products', { name: 'Free', tokens: 1e9, price: 0 })).status).toBe(403);

    const root = new Browser(c.proxy.url);
    await root.login('root@example.org');
    const made = await root.call('post', '/console/api/admin/products', { id: 'gift', name: 'Gift', tokens: 10, price: 0 });
    expect(made.status).toBe(201);
    // The rest of the admin API, through the same handlers as /admin.
    const keys = await root.call('get', '/console/api/admin/keys');
    expect(keys.status).toBe(200);
    expect(Array.isArray(keys.body.data)).toBe(true);
    expect((await root.call('get', '/console/api/admin/nothing-here')).status).toBe(404);
    // And without a session, nothing.
    expect((await new Browser(c.proxy.url).call('get', '/console/api/admin/products')).status).toBe(401);
  });

  it('answers unknown console routes with a 404 in the OpenAI shape, and marks replies no-store', async () => {
    const res = await ada.call('get', '/console/api/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('never logs a password, a session id or a redemption code', async () => {
    const b = new Browser(c.proxy.url);
    await b.login('ada@example.org', 'a wrong password here');
    await b.login('ada@example.org');
    const logs = c.proxy.logs.join('');
    expect(logs).not.toContain('correct horse battery');
    expect(logs).not.toContain('a wrong password here');
    expect(logs).not.toContain(b.cookie!.split('=')[1]);
    expect(logs).not.toContain(ada.cookie!.split('.')[1]);
  });
});

describe('the logger', () => {
  it('redacts passwords and session cookies should a log call ever carry them', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    logger.info({ password: 'hunter2 hunter2', cookie: 'tm_session=acc_1.s3cret', headers: { cookie: 'tm_session=x.s3cret' } }, 'oops');
    expect(lines.join('')).not.toMatch(/hunter2|s3cret/);
  });
});
