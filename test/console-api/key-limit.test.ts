/** An account holder scripting key creation: the account's keys stop at MAX_KEYS_PER_ACCOUNT, on both stores and both APIs. */
import { accountWithPassword, admin, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { storeKinds } from '../helpers/stores';

describe.each(storeKinds)('keys per account (%s store)', (kind) => {
  let c: ConsoleFixture;
  beforeEach(async () => {
    c = await startConsole(kind, { MAX_KEYS_PER_ACCOUNT: '3' });
  });
  afterEach(async () => {
    await c.close();
  });

  it('an account cannot create unlimited keys: past the limit a 400, even for keys asked for all at once', async () => {
    const ada = await accountWithPassword(c.s.store, 'ada@example.org');
    const b = new Browser(c.proxy.url);
    await b.login('ada@example.org');
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => b.call('post', '/console/api/keys', { name: `bot ${i}` })));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(3);
    for (const refused of replies.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request_error', type: 'invalid_request_error' });
      expect(refused.body.error.message).toContain('3 API keys');
      expect(refused.body.error.message).not.toContain('\n    at ');
    }
    expect((await b.call('get', '/console/api/keys')).body.data).toHaveLength(3);

    // Revoking does not make room (revoked keys are kept, and count); the operator's routes keep the same limit.
    const first = replies.find((r) => r.status === 201)!.body.id as string;
    expect((await b.call('delete', `/console/api/keys/${first}`)).status).toBe(200);
    expect((await b.call('post', '/console/api/keys', { name: 'again' })).status).toBe(400);
    const operator = await admin(c.proxy.url).post(`/admin/accounts/${ada.id}/keys`, { name: 'ops' });
    expect(operator.status).toBe(400);
    expect(operator.body.error.code).toBe('invalid_request_error');
    expect(await c.s.store.listKeys(ada.id)).toHaveLength(3);
  });
});
