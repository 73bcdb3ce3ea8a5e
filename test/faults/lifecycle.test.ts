/** The proxy process's life: kill -9 mid-stream returns the reservation after its lease; SIGTERM drains gracefully. */
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import request from 'supertest';
import { RedisStore } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody } from '../helpers/proxy';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { startUpstream, streamReply, words, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(30_000);

/** Opens a stream; resolves once its first bytes arrived, with a promise of its end. */
function openStream(url: string, secret: string): Promise<{ ended: Promise<{ status: number; text: string; complete: boolean }> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${secret}` } }, (res) => {
      let text = '';
      const ended = new Promise<{ status: number; text: string; complete: boolean }>((done) => {
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, text, complete: res.complete }));
        res.on('error', () => done({ status: res.statusCode ?? 0, text, complete: false }));
        res.on('close', () => done({ status: res.statusCode ?? 0, text, complete: res.complete }));
      });
      res.once('data', () => resolve({ ended }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(chatBody({ stream: true })));
  });
}

describe('process lifecycle', () => {
  let upstream: TestUpstream;
  let client: Redis;
  let store: RedisStore;
  let prefix: string;
  let proxy: ProxyProcess;

  beforeEach(async () => {
    upstream = await startUpstream();
    prefix = `life${Math.random().toString(36).slice(2, 8)}:`;
    client = new Redis(testRedisUrl());
    store = new RedisStore(client, { prefix });
  });
  afterEach(async () => {
    await proxy?.stop('SIGKILL');
    await upstream.close();
    await store.close();
  });

  const start = (env: Record<string, string> = {}) =>
    startProxyProcess({
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      JOURNAL_FILE: join(mkdtempSync(join(tmpdir(), 'tm-life-')), 'journal'),
      ...env,
    });

  it('kill -9 mid-stream: the reservation returns to the balance when its lease runs out', async () => {
    proxy = await start({ RESERVATION_LEASE_SECONDS: '1' });
    const key = await keyWithTokens(store, 10_000);
    upstream.behave(streamReply({ tokens: words(100), delayMs: 50 }));
    await openStream(proxy.url, key.secret);
    expect((await store.getKey(key.id))!.reserved).toBeGreaterThan(0);
    await proxy.stop('SIGKILL');
    await eventually(async () => expect(await store.getKey(key.id)).toMatchObject({ reserved: 0, balance: 10_000 }), 5_000);
    expect(await store.usage({ keyId: key.id, limit: 10 })).toHaveLength(0);
  });

  it('SIGTERM: refuses new connections, lets the in-flight stream finish, settles it, and exits 0', async () => {
    proxy = await start();
    const key = await keyWithTokens(store, 10_000);
    upstream.behave(streamReply({ tokens: words(15), delayMs: 100 }));
    const { ended } = await openStream(proxy.url, key.secret);
    proxy.child.kill('SIGTERM');
    await eventually(async () => expect(proxy.output()).toContain('shutting down'));
    await expect(request(proxy.url).get('/healthz')).rejects.toThrow(/ECONNREFUSED/);
    const result = await ended;
    expect(result.status).toBe(200);
    expect(result.text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await proxy.exited()).toBe(0);
    const [record] = await store.usage({ keyId: key.id, limit: 10 });
    expect(record).toMatchObject({ status: 200, completionTokens: 15, estimated: false });
    expect(await store.getKey(key.id)).toMatchObject({ reserved: 0, balance: 10_000 - record.chargedTokens });
  });

  it('SIGTERM: a stream still running after the grace period is cut, charged for what was sent, and the exit is 0', async () => {
    proxy = await start({ SHUTDOWN_GRACE_SECONDS: '1' });
    const key = await keyWithTokens(store, 10_000);
    upstream.behave(streamReply({ tokens: words(200), delayMs: 50 }));
    const { ended } = await openStream(proxy.url, key.secret);
    proxy.child.kill('SIGTERM');
    const result = await ended;
    expect(result.complete).toBe(false);
    expect(await proxy.exited()).toBe(0);
    const [record] = await store.usage({ keyId: key.id, limit: 10 });
    expect(record.status).toBe(499);
    expect(record.completionTokens).toBeGreaterThan(0);
    expect(record.completionTokens).toBeLessThan(200);
    expect(await store.getKey(key.id)).toMatchObject({ reserved: 0, balance: 10_000 - record.chargedTokens });
    expect(upstream.calls[0].aborted).toBe(true);
  });
});
