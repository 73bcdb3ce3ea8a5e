/**
 * Usage cursors a client makes up: a bad one is the client's 400 (param named) on both stores and both routes, never
 * a 503 store failure that would page the operator through the store-error alert.
 */
import { accountWithPassword, admin, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { storeKinds } from '../helpers/stores';

/** Cursors no page ever gave: nothing is before 0-0, and Redis refuses ids past 64 bits, fractions and signs. */
const BAD = [
  ['before', '0-0'],
  ['before', '00-000'],
  ['after', '99999999999999999999-0'],
  ['before', '1-99999999999999999999'],
  ['after', '1.5-0'],
  ['before', '-1-0'],
  ['after', '1e3-0'],
] as const;

describe.each(storeKinds)('usage cursors (%s store)', (kind) => {
  let c: ConsoleFixture;
  let accountId: string;
  let b: Browser;
  beforeAll(async () => {
    c = await startConsole(kind);
    accountId = (await accountWithPassword(c.s.store, 'ada@example.org')).id;
    b = new Browser(c.proxy.url);
    await b.login('ada@example.org');
  });
  afterAll(async () => {
    await c.close();
  });

  const storeErrors = async () => (await c.proxy.metrics.storeErrors.get()).values.reduce((sum, v) => sum + v.value, 0);

  it.each(BAD)('a malformed cursor (%s=%s) is a 400 naming it, with no store error', async (param, value) => {
    const errorsBefore = await storeErrors();
    const operator = await admin(c.proxy.url).get(`/admin/usage?account_id=${accountId}&${param}=${encodeURIComponent(value)}`);
    const holder = await b.call('get', `/console/api/usage?${param}=${encodeURIComponent(value)}`);
    for (const res of [operator, holder]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', param });
    }
    expect(await storeErrors()).toBe(errorsBefore);
  });

  it('takes the cursors a reader legitimately sends: 0-0 to read from the start, and the largest safe one', async () => {
    for (const query of ['after=0-0', 'before=9007199254740991-9007199254740991', 'after=9007199254740991-9007199254740991']) {
      const res = await admin(c.proxy.url).get(`/admin/usage?account_id=${accountId}&${query}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [] });
    }
  });
});
