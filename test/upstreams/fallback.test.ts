/**
 * A model whose pool cannot answer fails over to its fallback: reserved again at the fallback's weights under the same
 * request id, answered and charged as the fallback (its id in `model`, the charge header and the ledger), once; a
 * balance that cannot cover the fallback is refused with insufficient_quota and nothing is forwarded.
 */
import request from 'supertest';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { startProxy, settled, chatBody, MODEL, type ProxyUnderTest } from '../helpers/proxy';
import { expectLedgerMatches, startServers, type Reported } from '../helpers/pool';
import type { TestUpstream } from '../helpers/upstream';
import { claimPort } from '../helpers/ports';

const BACKUP = 'acme/backup';

describe('fallback models (redis store)', () => {
  let s: StoreUnderTest;
  let backup: TestUpstream;
  let proxy: ProxyUnderTest;
  let reported: Reported[];

  beforeEach(async () => {
    s = await makeStore('redis');
    reported = [];
    [backup] = await startServers(1, reported);
    const down = [`http://127.0.0.1:${await claimPort()}/v1`, `http://127.0.0.1:${await claimPort()}/v1`];
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: backup.url,
      upstreams: [
        { name: 'primary', servers: down.map((url) => ({ url })), health_interval: 0 },
        { name: 'hosted', url: backup.url },
      ],
      models: [
        { upstream: 'primary', fallbacks: [BACKUP] },
        { id: BACKUP, upstream: 'hosted', quota_weight: { input: 2, output: 3 } },
      ],
    });
  });
  afterEach(async () => {
    await proxy.close();
    await backup.close();
    await s.close();
  });

  const post = (secret: string, body: Record<string, unknown>) =>
    request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(body);

  it('answers from the fallback when every server of the pool is down, charged at its weights, once', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const json = await post(key.secret, chatBody());
    expect(json.status).toBe(200);
    expect(json.body.model).toBe(BACKUP);
    expect(json.headers['x-tokenmeter-model']).toBe(BACKUP);
    // 9 prompt tokens at 2, 5 completion tokens at 3.
    expect(json.headers['x-tokenmeter-charged-tokens']).toBe('33');
    const stream = await post(key.secret, chatBody({ stream: true }));
    expect(stream.status).toBe(200);
    expect(stream.text).toContain(`"model":"${BACKUP}"`);
    expect(stream.text).toContain('data: [DONE]');
    expect(backup.calls).toHaveLength(2);
    await settled(proxy);
    const records = await s.store.usage({ keyId: key.id, limit: 10 });
    expect(records.map((r) => [r.model, r.chargedTokens])).toEqual([
      [BACKUP, 33],
      [BACKUP, 33],
    ]);
    expect(await s.store.getKey(key.id)).toMatchObject({ balance: 10_000 - 66, reserved: 0 });
    await expectLedgerMatches(s.store, key.id, reported, 2);
    const fallbacks = await proxy.metrics.registry.getSingleMetricAsString('tokenmeter_upstream_fallbacks_total');
    expect(fallbacks).toContain(`model="${MODEL}",fallback="${BACKUP}",reason="failed"} 2`);
  });

  it('refuses with insufficient_quota, forwarding nothing, when the balance covers the model but not its fallback', async () => {
    // A prompt of about 200 tokens: the model's reservation (≈ 200 + output) fits 300, the fallback's (≈ 400 + 3) does not.
    const key = await keyWithTokens(s.store, 300);
    const long = chatBody({ messages: [{ role: 'user', content: 'hello '.repeat(200) }], max_tokens: 1 });
    const res = await post(key.secret, long);
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('insufficient_quota');
    expect(backup.calls).toHaveLength(0);
    // The model's own reservation was admitted: its pool was tried before the fallback was refused.
    const tries = await proxy.metrics.registry.getSingleMetricAsString('tokenmeter_upstream_requests_total');
    expect(tries).toContain('outcome="connect_error"');
    await settled(proxy);
    expect(await s.store.getKey(key.id)).toMatchObject({ balance: 300, reserved: 0 });
    expect(await s.store.usage({ keyId: key.id, limit: 10 })).toHaveLength(0);
  });
});
