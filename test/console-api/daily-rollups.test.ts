/**
 * The daily chart reads rollups, not the ledger: for an account with thousands of records the console's
 * /console/api/usage/daily and the operator's /admin/usage/daily ask Redis for one hash per day (watched with
 * MONITOR: no stream read, a bounded number of commands), and show the same sums the ledger holds. An account whose
 * ledger predates rollups still shows every record once (its early days read from the ledger).
 */
import { accountWithPassword, admin, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { eventually } from '../helpers/eventually';
import { startMonitor, type Monitor } from '../helpers/monitor';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { settlement } from '../store/contract-fixtures';

const RECORDS = 2_000;

describe('the daily chart of an account with many records', () => {
  let t: ConsoleFixture;
  let watch: Monitor | undefined;
  beforeAll(async () => {
    t = await startConsole('redis');
  });
  afterAll(async () => {
    watch?.close();
    await t.close();
  });

  /** Every command Redis ran on the account's keys during `run`. */
  async function commandsOn(accountId: string, run: () => Promise<unknown>): Promise<string[][]> {
    // Started once the records are written: MONITOR slows every command Redis runs.
    watch ??= await startMonitor(testRedisUrl());
    const seen = await watch.during(run);
    return seen.map((c) => c.args).filter((args) => args.some((a) => a.includes(`{${accountId}}`)));
  }

  it('reads one rollup per day, never the ledger, and sums every record', async () => {
    const holder = await accountWithPassword(t.s.store, 'many@example.com');
    const k = await keyWithTokens(t.s.store, 10_000_000, { accountId: holder.id });
    // Bulk through the store (the settle step is the same as the proxy's), 100 at a time.
    for (let i = 0; i < RECORDS; i += 100)
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => t.s.store.settle(settlement(k, `r${i + j}`, 15, { model: j % 2 ? 'acme/m1' : 'acme/m2' }))),
      );
    const browser = new Browser(t.proxy.url);
    await browser.login('many@example.com');
    // The rollup follower adds the records about a second after they settle; watched only once it has, so what is
    // seen is the chart's reads alone.
    await eventually(
      async () => {
        const rows = (await browser.call('get', '/console/api/usage/daily?days=1')).body.data as { requests: number }[];
        expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(RECORDS);
      },
      10_000,
      'the rollup follower to add every record',
    );
    let chart: any;
    const holderCalls = await commandsOn(holder.id, async () => (chart = await browser.call('get', '/console/api/usage/daily?days=30')));
    const date = new Date().toISOString().slice(0, 10);
    const half = {
      requests: RECORDS / 2,
      prompt_tokens: 5 * RECORDS,
      completion_tokens: 2.5 * RECORDS,
      cached_tokens: 0,
      reasoning_tokens: 0,
    };
    expect(chart.body.data).toEqual([
      { date, model: 'acme/m1', ...half, charged_tokens: 7.5 * RECORDS },
      { date, model: 'acme/m2', ...half, charged_tokens: 7.5 * RECORDS },
    ]);
    let operator: any;
    const adminCalls = await commandsOn(holder.id, async () => (operator = await admin(t.proxy.url).get(`/admin/usage/daily?days=30`)));
    expect(operator.body.data).toEqual(chart.body.data);
    for (const calls of [holderCalls, adminCalls]) {
      expect(calls.filter((c) => /^x/i.test(c[0]))).toEqual([]);
      expect(calls.filter((c) => c.some((a) => a.includes(':d:')))).toHaveLength(30);
      // Beyond the days: the session check and the account's state (about 20 commands, scripts' inside counted).
      expect(calls.length).toBeLessThanOrEqual(55);
    }
  });

  it('refuses a bad day count on the operator’s daily route with an OpenAI-shaped error', async () => {
    const reply = await admin(t.proxy.url).get('/admin/usage/daily?days=0');
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ type: 'invalid_request_error', param: 'days' });
  });

  it('counts an account’s records from before rollups once, from its ledger', async () => {
    const holder = await accountWithPassword(t.s.store, 'upgraded@example.com');
    const k = await keyWithTokens(t.s.store, 10_000, { accountId: holder.id });
    // A record the previous version wrote: in the ledger, in no rollup.
    const now = Math.floor(Date.now() / 1000);
    await t.s.redis!.xadd(
      `${t.s.prefix}{${holder.id}}:u`,
      '*',
      ...['request_id', 'old', 'key_id', k.id, 'model', 'acme/m1'],
      ...['prompt_tokens', '10', 'completion_tokens', '5', 'charged_tokens', '15', 'estimated', '0', 'stream', '0'],
      ...['status', '200', 'created', String(now), 'endpoint', 'chat'],
    );
    await t.s.store.settle(settlement(k, 'new', 15));
    const browser = new Browser(t.proxy.url);
    await browser.login('upgraded@example.com');
    // The new record reaches the rollups with the follower's next pass (about a second).
    await eventually(
      async () => {
        const rows = (await browser.call('get', '/console/api/usage/daily?days=7')).body.data;
        expect(rows).toMatchObject([{ model: 'acme/m1', requests: 2, charged_tokens: 30 }]);
      },
      10_000,
      'the rollup follower to add the record',
    );
  });
});
