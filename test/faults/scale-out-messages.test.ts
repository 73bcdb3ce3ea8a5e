/**
 * The no-overspend contract on /v1/messages: two proxy processes share one Redis; 200 concurrent Messages requests
 * (JSON and streams, each spending every token it may) through both never charge an account beyond its packages nor
 * a key beyond its cap, and leave nothing reserved.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import request from 'supertest';
import { RedisStore } from '../../src/store/redis/redis-store';
import { messagesReply, type Block } from '../helpers/anthropic-upstream';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { keyWithTokens, newAccount, testRedisUrl } from '../helpers/stores';
import { startUpstream, words, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(60_000);

const MODEL = 'acme/messages';
const ACCOUNT_GRANT = 4_000;
/** The upstream spends every token it is allowed, a little slowly, so requests overlap across the two proxies. */
const SPEND_ALL: Block = { type: 'text', pieces: words(1000) };

describe('two proxy processes on one Redis, /v1/messages', () => {
  let upstream: TestUpstream;
  let store: RedisStore;
  let proxies: ProxyProcess[];

  beforeAll(async () => {
    const reply = messagesReply({ blocks: [SPEND_ALL], cacheRead: 3, cacheWrite: 2 });
    upstream = await startUpstream(async (call, req, res) => {
      await new Promise((r) => setTimeout(r, 10));
      return reply(call, req, res);
    });
    const prefix = `scalemsg${Math.random().toString(36).slice(2, 8)}:`;
    store = new RedisStore(new Redis(testRedisUrl()), { prefix });
    const models = [
      {
        id: MODEL,
        context_length: 8192,
        max_output_tokens: 1024,
        endpoints: ['messages'],
        quota_weight: { input: 1, cached_input: 0.5, cache_write: 2, output: 1 },
      },
    ];
    const env = {
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(models),
      STORE_TIMEOUT_MS: '10000',
    };
    proxies = [];
    for (let i = 0; i < 2; i++) {
      proxies.push(await startProxyProcess({ ...env, JOURNAL_FILE: join(mkdtempSync(join(tmpdir(), 'tm-scale-')), 'journal') }));
    }
  });
  afterAll(async () => {
    for (const p of proxies ?? []) await p.stop('SIGKILL');
    await store?.close();
    await upstream?.close();
  });

  it('never charges an account beyond its packages nor any of its three keys beyond its cap, 200 requests through both', async () => {
    const accountId = await newAccount(store);
    const caps = [600, 1_200, null];
    const keys: { id: string; secret: string }[] = [];
    for (const cap of caps) keys.push(await keyWithTokens(store, 0, { accountId, limitTokens: cap }));
    await store.grantPackage(accountId, { tokens: ACCOUNT_GRANT, expiresAt: null });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        request(proxies[i % 2].url)
          .post('/v1/messages')
          .set('x-api-key', keys[i % 3].secret)
          .send({ model: MODEL, max_tokens: 30, stream: i % 4 === 0, messages: [{ role: 'user', content: 'Say hello.' }] }),
      ),
    );
    // A balance or cap that falls short is Anthropic's billing_error (402), never served.
    expect(results.every((r) => r.status === 200 || r.status === 402)).toBe(true);
    const served = results.filter((r) => r.status === 200).length;
    const ledger = await eventually(async () => {
      const l = await store.usage({ accountId, limit: 1000 });
      expect(l).toHaveLength(served);
      return l;
    });
    const chargedBy = (keyId: string) => ledger.filter((r) => r.keyId === keyId).reduce((a, r) => a + r.chargedTokens, 0);
    const charged = ledger.reduce((a, r) => a + r.chargedTokens, 0);
    // Every request was charged its usage: 9 input, 2 written at 2, 3 read at 0.5, its output (30, or what a short
    // balance lowered max_tokens to).
    for (const r of ledger) expect(r.chargedTokens).toBe(Math.ceil(9 + 2 * 2 + 3 * 0.5 + r.completionTokens));
    expect(Math.max(...ledger.map((r) => r.completionTokens))).toBe(30);
    expect(charged).toBeLessThanOrEqual(ACCOUNT_GRANT);
    expect(chargedBy(keys[0].id)).toBeLessThanOrEqual(600);
    expect(chargedBy(keys[1].id)).toBeLessThanOrEqual(1_200);
    expect(await store.getAccount(accountId)).toMatchObject({ reserved: 0, debt: 0, balance: ACCOUNT_GRANT - charged });
    for (const k of keys) expect(await store.getKey(k.id)).toMatchObject({ reserved: 0, spentTokens: chargedBy(k.id) });
    for (let k = 0; k < 3; k++) expect(results.some((r, i) => i % 3 === k && r.status === 402)).toBe(true);
  });
});
