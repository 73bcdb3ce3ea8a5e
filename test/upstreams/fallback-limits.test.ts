/**
 * A fallback gives back what the first model took: a model whose pool answers 503 falls back to another, and the first
 * model's concurrency slot, rpm and tpm are let go in the step that reserves the fallback, so it keeps working however
 * many requests follow (they used to leak a slot each until their lease lapsed). Limits on both models and on the key.
 */
import request from 'supertest';
import { keyWithTokens, makeStore, storeKinds, type StoreUnderTest } from '../helpers/stores';
import { startProxy, settled, chatBody, type ProxyUnderTest } from '../helpers/proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

const BACKUP = 'acme/backup';

describe.each(storeKinds)('a fallback lets go of the first model’s limits (%s store)', (kind) => {
  let s: StoreUnderTest;
  let refusing: TestUpstream;
  let backup: TestUpstream;
  let proxy: ProxyUnderTest;

  beforeEach(async () => {
    s = await makeStore(kind);
    refusing = await startUpstream((_call, _req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
    });
    backup = await startUpstream();
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: backup.url,
      upstreams: [
        { name: 'primary', url: refusing.url },
        { name: 'hosted', url: backup.url },
      ],
      models: [
        { upstream: 'primary', fallbacks: [BACKUP], limits: { max_concurrent: 2, rpm: 3, tpm: 20_000 } },
        { id: BACKUP, upstream: 'hosted', limits: { max_concurrent: 2 } },
      ],
    });
  });
  afterEach(async () => {
    await proxy.close();
    await refusing.close();
    await backup.close();
    await s.close();
  });

  it('answers every request from the fallback, one after another, far past the first model’s max_concurrent and rpm', async () => {
    const key = await keyWithTokens(s.store, 100_000, { limits: { maxConcurrent: 2, rpm: 100 } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
      statuses.push(res.status);
      expect(res.body.model ?? res.body.error).toBe(BACKUP);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(refusing.calls).toHaveLength(6);
    expect(backup.calls).toHaveLength(6);
    await settled(proxy);
    // Nothing left held: two requests at once still fit the first model's two slots, and both levels' others.
    const both = await Promise.all(
      [0, 1].map(() => request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody())),
    );
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    await settled(proxy);
    const records = await s.store.usage({ keyId: key.id, limit: 20 });
    expect(records).toHaveLength(8);
    expect(new Set(records.map((r) => r.model))).toEqual(new Set([BACKUP]));
    expect(await s.store.getKey(key.id)).toMatchObject({ reserved: 0 });
  });
});
