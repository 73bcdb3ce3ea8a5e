/**
 * Scale-out: two proxy processes share one Redis, then a real three-master Redis Cluster. Under concurrent load on one
 * small balance the sum charged never exceeds the grant, and a revocation through one is refused by the other at once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { Cluster } from 'ioredis';
import request from 'supertest';
import type { ChatRequest } from '../../src/requests/chat-request';
import { promptTokenBound } from '../../src/metering/estimate';
import { RedisStore } from '../../src/store/redis/redis-store';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody } from '../helpers/proxy';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster';
import { eventually } from '../helpers/eventually';
import { keyWithTokens, newAccount, testRedisUrl } from '../helpers/stores';
import { jsonReply, startUpstream, streamReply, words, type Behaviour, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(60_000);

const ADMIN = 'scale-out-admin-token-123';
const GRANT = 2_000;
/**
 * More than the two capped keys may spend together (600 + 1,200), less than the uncapped key's 66 requests alone want
 * (66 × 39): every limit is pressed in every schedule (each capped key's 67 requests want 2,613), so some requests of
 * every key are refused or cut short, and the invariants below are tested where they bind, whatever the interleaving.
 */
const ACCOUNT_GRANT = 2_000;

/** The upstream spends every token it is allowed, a little slowly, so requests overlap across the two proxies. */
const spendAll: Behaviour = async (call, req, res) => {
  await new Promise((r) => setTimeout(r, 10));
  return call.body.stream ? streamReply({ tokens: words(1000) })(call, req, res) : jsonReply({ tokens: words(1000) })(call, req, res);
};

describe.each([
  ['one Redis', false],
  ['a three-master Redis Cluster', true],
])('two proxy processes on %s', (_name, cluster) => {
  let upstream: TestUpstream;
  let redisCluster: RedisCluster | undefined;
  let store: RedisStore;
  let proxies: ProxyProcess[];

  beforeAll(async () => {
    upstream = await startUpstream(spendAll);
    redisCluster = cluster ? await startRedisCluster() : undefined;
    const url = redisCluster?.url ?? testRedisUrl();
    const prefix = `scale${Math.random().toString(36).slice(2, 8)}:`;
    const client = cluster ? new Cluster([url]) : new Redis(url);
    store = new RedisStore(client, { prefix });
    const env = {
      REDIS_URL: url,
      REDIS_CLUSTER: String(cluster),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      ADMIN_TOKEN: ADMIN,
      // These tests are about overspending, not a slow store: a loaded machine must not turn Redis latency into 503s.
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
    await redisCluster?.stop();
    await upstream?.close();
  });

  it('never charges more than the grant under concurrent load through both', async () => {
    const key = await keyWithTokens(store, GRANT);
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        request(proxies[i % 2].url)
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${key.secret}`)
          .send(chatBody({ max_tokens: 30, stream: i % 3 === 0 })),
      ),
    );
    const served = results.filter((r) => r.status === 200).length;
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const ledger = await eventually(async () => {
      const l = await store.usage({ keyId: key.id, limit: 1000 });
      expect(l).toHaveLength(served);
      return l;
    });
    const charged = ledger.reduce((a, r) => a + r.chargedTokens, 0);
    expect(charged).toBeLessThanOrEqual(GRANT);
    expect(await store.getKey(key.id)).toMatchObject({ reserved: 0, debt: 0, balance: GRANT - charged });
    // Even if every request had reserved at once, with the prompt's upper bound, the grant covers this many.
    const perRequest = promptTokenBound(chatBody() as ChatRequest) + 30;
    expect(served).toBeGreaterThanOrEqual(Math.floor(GRANT / perRequest));
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
          .post('/v1/chat/completions')
          .set('authorization', `Bearer ${keys[i % 3].secret}`)
          .send(chatBody({ max_tokens: 30, stream: i % 4 === 0 })),
      ),
    );
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const served = results.filter((r) => r.status === 200).length;
    const ledger = await eventually(async () => {
      const l = await store.usage({ accountId, limit: 1000 });
      expect(l).toHaveLength(served);
      return l;
    });
    // Each served request charged what the upstream reported: at most 9 + 30, less where a limit cut its allowance.
    expect(ledger.filter((r) => r.chargedTokens !== r.promptTokens + r.completionTokens || r.completionTokens > 30)).toEqual([]);
    const chargedBy = (keyId: string) => ledger.filter((r) => r.keyId === keyId).reduce((a, r) => a + r.chargedTokens, 0);
    const charged = ledger.reduce((a, r) => a + r.chargedTokens, 0);
    expect(charged).toBeLessThanOrEqual(ACCOUNT_GRANT);
    expect(chargedBy(keys[0].id)).toBeLessThanOrEqual(600);
    expect(chargedBy(keys[1].id)).toBeLessThanOrEqual(1_200);
    expect(await store.getAccount(accountId)).toMatchObject({ reserved: 0, debt: 0, balance: ACCOUNT_GRANT - charged });
    for (const k of keys) expect(await store.getKey(k.id)).toMatchObject({ reserved: 0, spentTokens: chargedBy(k.id) });
  });

  it('sees a revocation made through one proxy at once on the other', async () => {
    const created = await request(proxies[0].url).post('/admin/keys').set('authorization', `Bearer ${ADMIN}`).send({ tokens: 10_000 });
    const secret = created.body.key as string;
    await request(proxies[1].url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${secret}`)
      .send(chatBody({ max_tokens: 5 }))
      .expect(200);
    await request(proxies[0].url).delete(`/admin/keys/${created.body.id}`).set('authorization', `Bearer ${ADMIN}`).expect(200);
    const refused = await request(proxies[1].url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${secret}`)
      .send(chatBody({ max_tokens: 5 }));
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('revoked');
  });

  it('sees an account disabled through one proxy at once on the other, for every key of the account', async () => {
    const auth = { authorization: `Bearer ${ADMIN}` };
    const account = (await request(proxies[0].url).post('/admin/accounts').set(auth).send({ tokens: 10_000 })).body;
    const secrets: string[] = [];
    for (let i = 0; i < 2; i++) {
      secrets.push((await request(proxies[0].url).post(`/admin/accounts/${account.id}/keys`).set(auth).send({})).body.key);
    }
    const complete = (secret: string) =>
      request(proxies[1].url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${secret}`)
        .send(chatBody({ max_tokens: 5 }));
    // Both keys are known (and cached) on the second proxy before the account is disabled on the first.
    for (const secret of secrets) await complete(secret).expect(200);
    await request(proxies[0].url).patch(`/admin/accounts/${account.id}`).set(auth).send({ status: 'disabled' }).expect(200);
    for (const secret of secrets) {
      const refused = await complete(secret);
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toContain('disabled');
    }
  });
});
