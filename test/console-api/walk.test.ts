/**
 * The account holder's walk, on Redis: register (open), log in, see a balance of 0, redeem a code, create a key (its
 * secret shown once), make metered requests with the official openai SDK, and find them in usage and daily totals.
 */
import OpenAI from 'openai';
import { settled, MODEL } from '../helpers/proxy';
import { admin, Browser, startConsole, type ConsoleFixture } from '../helpers/console';
import { eventually } from '../helpers/eventually';

describe('the self-service walk', () => {
  let c: ConsoleFixture;
  beforeAll(async () => {
    c = await startConsole('redis', { ACCOUNT_REGISTRATION: 'open' });
  });
  afterAll(async () => {
    await c.close();
  });

  it('registers, redeems, creates a key, spends it with the openai SDK and sees the usage', async () => {
    const operator = admin(c.proxy.url);
    const product = await operator.post('/admin/products', { id: 'starter', name: 'Starter', tokens: 50_000, valid_days: 30, price: 500 });
    expect(product.status).toBe(201);
    const codes = await operator.post('/admin/redemption-codes', { product_id: 'starter', count: 1 });
    expect(codes.status).toBe(201);
    const code: string = codes.body.data[0].code;

    const browser = new Browser(c.proxy.url);
    const registered = await browser.call('post', '/console/api/register', {
      email: 'Ada@Example.org',
      password: 'a long passphrase',
      name: 'Ada',
    });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ email: 'ada@example.org', name: 'Ada', role: 'member', status: 'active' });
    expect(browser.cookie).toBeUndefined();

    const login = await browser.login('ada@example.org', 'a long passphrase');
    expect(login.status).toBe(200);
    const setCookie = (login.headers['set-cookie'] as string[])[0];
    expect(setCookie).toMatch(/^tm_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);

    expect((await browser.call('get', '/console/api/me')).body).toMatchObject({ email: 'ada@example.org', balance: 0, packages: [] });

    const redeemed = await browser.call('post', '/console/api/redeem', { code });
    expect(redeemed.status).toBe(201);
    expect(redeemed.body).toMatchObject({ tokens: 50_000, remaining: 50_000 });
    expect(redeemed.body.expires_at).toBeGreaterThan(Date.now() / 1000 + 29 * 86_400);
    expect((await browser.call('get', '/console/api/me')).body.balance).toBe(50_000);

    const created = await browser.call('post', '/console/api/keys', { name: 'laptop', limit_tokens: 20_000 });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^sk-/);
    expect(created.body).toMatchObject({ name: 'laptop', limit_tokens: 20_000, spent: 0, last_used: null });
    const listed = await browser.call('get', '/console/api/keys');
    expect(listed.body.data).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    expect(listed.body.data[0].prefix).toBe(created.body.key.slice(0, 10));

    const client = new OpenAI({ apiKey: created.body.key, baseURL: c.proxy.baseURL });
    let charged = 0;
    for (let i = 0; i < 2; i++) {
      const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }] });
      charged += completion.usage!.total_tokens;
    }
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) if (chunk.usage) charged += chunk.usage.total_tokens;
    await settled(c.proxy);

    const me = (await browser.call('get', '/console/api/me')).body;
    expect(me.balance).toBe(50_000 - charged);
    expect(me.usage).toMatchObject({ requests: 3, charged_tokens: charged });

    const usage = await browser.call('get', '/console/api/usage');
    expect(usage.status).toBe(200);
    expect(usage.body.data).toHaveLength(3);
    expect(usage.body.data.every((u: { key_id: string }) => u.key_id === created.body.id)).toBe(true);
    // Paging back in time: before the newest record, the two older ones, oldest first.
    const older = await browser.call('get', `/console/api/usage?before=${usage.body.data[2].cursor}&limit=5`);
    expect(older.body.data.map((u: { request_id: string }) => u.request_id)).toEqual(
      usage.body.data.slice(0, 2).map((u: { request_id: string }) => u.request_id),
    );

    // The chart's rollups follow the ledger within about a second.
    const today = new Date().toISOString().slice(0, 10);
    const daily = await eventually(
      async () => {
        const got = await browser.call('get', '/console/api/usage/daily?days=30');
        expect(got.status).toBe(200);
        expect(got.body.data).toEqual([expect.objectContaining({ date: today, model: MODEL, requests: 3, charged_tokens: charged })]);
        return got;
      },
      5_000,
      'the chart to hold the three requests',
    );
    const prompt = usage.body.data.reduce((n: number, u: { prompt_tokens: number }) => n + u.prompt_tokens, 0);
    expect(daily.body.data[0].prompt_tokens).toBe(prompt);

    const keyAfter = (await browser.call('get', '/console/api/keys')).body.data[0];
    expect(keyAfter.spent).toBe(charged);
    expect(keyAfter.last_used).toBeGreaterThan(0);
  });
});
