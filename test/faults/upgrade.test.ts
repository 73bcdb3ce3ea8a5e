/**
 * The upgrade: two processes of this version start together on a Redis the version before accounts wrote (with its
 * own scripts, frozen in test/helpers/legacy-store.ts). The old secret keeps working on the balance it had, its
 * ledger is intact, and the reservation in flight at the upgrade is still held (test/store/redis-migration.test.ts
 * settles it).
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import request from 'supertest';
import { generateKey } from '../../src/http/keys';
import { LegacyStore } from '../helpers/legacy-store';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody } from '../helpers/proxy';
import { testRedisUrl } from '../helpers/stores';
import { PROMPT_TOKENS, startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(60_000);

const ADMIN = 'upgrade-admin-token-123';

describe('upgrading a store written before accounts', () => {
  const prefix = `upg${randomBytes(3).toString('hex')}:`;
  const raw = new Redis(testRedisUrl());
  const legacy = new LegacyStore(raw, prefix);
  const secret = generateKey();
  let keyId: string;
  let upstream: TestUpstream;
  let proxies: ProxyProcess[] = [];

  beforeAll(async () => {
    upstream = await startUpstream();
    keyId = await legacy.createKey(secret.hash, 'old customer');
    await legacy.grant(keyId, 10_000);
    await legacy.reserve(keyId, 'before-1', 10, 100);
    await legacy.settle(keyId, { requestId: 'before-1', charged: 60, prompt: 10, completion: 50, model: 'acme/chat-small' });
    await legacy.reserve(keyId, 'in-flight', 10, 100);
  });
  afterAll(async () => {
    for (const p of proxies) await p.stop('SIGKILL');
    await upstream?.close();
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length) await raw.del(...keys);
    raw.disconnect();
  });

  it('starts two processes together, and the old key spends its old balance on both', async () => {
    const env = {
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      ADMIN_TOKEN: ADMIN,
    };
    proxies = await Promise.all([startProxyProcess(env), startProxyProcess(env)]);
    const upgraded = proxies.map((p) => /"keys":(\d+)[^\n]*store upgraded/.exec(p.output())?.[1] ?? '0').map(Number);
    expect(upgraded[0] + upgraded[1]).toBe(1);

    const admin = (path: string) => request(proxies[1].url).get(path).set('authorization', `Bearer ${ADMIN}`);
    // What the old version showed: 10,000 less 60 charged, less 110 held by the request in flight.
    expect((await admin(`/admin/keys/${keyId}`)).body).toMatchObject({
      account_id: keyId,
      balance: 9_830,
      reserved: 110,
      spent_tokens: 60,
    });
    expect((await admin(`/admin/accounts/${keyId}`)).body).toMatchObject({ name: 'old customer', balance: 9_830, usage: { requests: 1 } });

    for (const p of proxies) {
      await request(p.url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${secret.secret}`)
        .send(chatBody({ max_tokens: 5 }))
        .expect(200);
    }
    const ledger = (await admin(`/admin/usage?account_id=${keyId}`)).body.data;
    expect(ledger.map((r: { key_id: string }) => r.key_id)).toEqual([keyId, keyId, keyId]);
    expect(ledger[0]).toMatchObject({ request_id: 'before-1', charged_tokens: 60 });
    expect((await admin(`/admin/keys/${keyId}`)).body).toMatchObject({ balance: 9_830 - 2 * (PROMPT_TOKENS + 5) });
  });
});
