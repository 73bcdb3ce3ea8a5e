/**
 * Health as the pool sees it: a server failing its active health check gets no requests until it passes again, and a
 * models-file reload keeps requests under way on their server and the state of the servers that stay. A pool failing
 * its first check says why, per server, with the fix; what a fallback serves for it is counted; a reload that turns
 * checks off forgets what they decided.
 */
import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { stringify } from 'yaml';
import { ModelsFile } from '../../src/catalog/models';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { startProxy, settled, chatBody, MODEL, type ProxyUnderTest } from '../helpers/proxy';
import { expectLedgerMatches, reporting, startServers, type Reported } from '../helpers/pool';
import { writeModelsFile } from '../helpers/models-file';
import { streamReply, type TestUpstream, type UpstreamCall } from '../helpers/upstream';
import { eventually } from '../helpers/eventually';

const ADMIN_TOKEN = 'pool-admin-token-0123456789abcdef';

describe('pool health (memory store)', () => {
  let s: StoreUnderTest;
  let servers: TestUpstream[] = [];
  let proxy: ProxyUnderTest | undefined;
  let key: { id: string; secret: string };
  let reported: Reported[];

  beforeEach(async () => {
    s = await makeStore('memory');
    key = await keyWithTokens(s.store, 1_000_000);
    reported = [];
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    for (const u of servers) await u.close();
    servers = [];
    await s.close();
  });

  const post = (body: Record<string, unknown> = chatBody()) =>
    request((proxy as ProxyUnderTest).url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(body);
  const posts = (calls: UpstreamCall[]) => calls.filter((c) => c.path === '/v1/chat/completions').length;
  /** A server as metrics and the operator's API show it: scheme://host:port, never its path. */
  const origin = (url: string) => new URL(url).origin;
  const healthGauge = async (url: string) => {
    const text = await (proxy as ProxyUnderTest).metrics.registry.getSingleMetricAsString('tokenmeter_upstream_healthy');
    return new RegExp(`server="${url.replace(/[/.]/g, '\\$&')}"} (\\d)`).exec(text)?.[1];
  };

  it('sends nothing to a server failing its health check, and takes it back once it passes', async () => {
    servers = await startServers(2, reported);
    const [sick, well] = servers;
    let healthy = false;
    const answer = reporting(reported, () => sick.url);
    sick.behave((call, req, res) => {
      if (call.path.startsWith('/health') || call.path.startsWith('/v1/models')) {
        res.writeHead(healthy ? 200 : 500).end('{}');
        return;
      }
      return answer(call, req, res);
    });
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: sick.url,
      upstreams: [{ name: 'replicas', servers: servers.map((u) => ({ url: u.url })), health_interval: 0.05, api_key_env: 'POOL_KEY' }],
      models: [{ upstream: 'replicas' }],
      env: { POOL_KEY: 'sk-upstream-key' },
    });
    await eventually(async () => expect(await healthGauge(origin(sick.url))).toBe('0'));
    // Both paths were tried before the server was called unhealthy, with the upstream's key (/v1/models wants it).
    const checks = sick.calls.filter((c) => c.path === '/health' || c.path === '/v1/models');
    expect(new Set(checks.map((c) => c.path))).toEqual(new Set(['/health', '/v1/models']));
    expect(checks.every((c) => c.headers.authorization === 'Bearer sk-upstream-key')).toBe(true);
    for (let i = 0; i < 6; i++) expect((await post()).status).toBe(200);
    expect([posts(sick.calls), posts(well.calls)]).toEqual([0, 6]);
    expect(proxy.logs.some((l) => l.includes('upstream server failed its health check'))).toBe(true);

    healthy = true;
    await eventually(async () => expect(await healthGauge(origin(sick.url))).toBe('1'));
    for (let i = 0; i < 6; i++) expect((await post()).status).toBe(200);
    expect(posts(sick.calls)).toBe(3);
    await settled(proxy);
    await expectLedgerMatches(s.store, key.id, reported, 12);
  });

  it('keeps a stream under way on a server the reload removed, and the state of the servers that stay', async () => {
    servers = await startServers(3, reported);
    const [leaving, staying, joining] = servers;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const heldStream = streamReply({ holdAfterFirst: held });
    const leavingAnswer = reporting(reported, () => leaving.url);
    leaving.behave((call, req, res) => (call.body.stream ? heldStream(call, req, res) : leavingAnswer(call, req, res)));
    staying.behave((call, req, res: ServerResponse) => {
      // Its first request fails (503, tried elsewhere): the error it leaves must survive the reload.
      if (posts(staying.calls) === 1) {
        res.writeHead(503).end();
        return;
      }
      return reporting(reported, () => staying.url)(call, req, res);
    });
    const entry = (urls: string[]) => ({
      upstreams: [{ name: 'replicas', servers: urls.map((url) => ({ url })), health_interval: 0 }],
      models: [{ id: MODEL, upstream: 'replicas', context_length: 8192, max_output_tokens: 1024 }],
    });
    const file = writeModelsFile();
    writeFileSync(file, stringify(entry([leaving.url, staying.url])));
    const modelsFile = new ModelsFile(file, { upstreamUrl: leaving.url, upstreamApiKey: undefined, env: {} });
    proxy = await startProxy({ store: s.store, upstreamUrl: leaving.url, modelsFile, env: { ADMIN_TOKEN } });

    const streaming = post(chatBody({ stream: true })).then((r) => r);
    await eventually(async () => expect(posts(leaving.calls)).toBe(1));
    // The next request goes to the other server (fewer outstanding), which fails it with a 503: it is tried on leaving.
    expect((await post()).status).toBe(200);

    writeFileSync(file, stringify(entry([staying.url, joining.url])));
    await modelsFile.reload();
    const view = await request(proxy.url).get('/admin/upstreams').set('authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(view.body.data[0].servers.map((v: { url: string }) => v.url)).toEqual([origin(staying.url), origin(joining.url)]);
    expect(view.body.data[0].servers[0].last_error).toMatchObject({ message: 'status 503' });

    release();
    const streamed = await streaming;
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('data: [DONE]');
    for (let i = 0; i < 4; i++) expect((await post()).status).toBe(200);
    expect(posts(leaving.calls)).toBe(2);
    expect(posts(staying.calls) + posts(joining.calls)).toBe(5);
    await settled(proxy);
    const records = await s.store.usage({ keyId: key.id, limit: 100 });
    expect(records).toHaveLength(6);
  });

  it('says why, per server and with the fix, when no server passes its first check; counts what the fallback serves', async () => {
    servers = await startServers(3, reported);
    const [a, b, backup] = servers;
    for (const u of [a, b]) u.behave((_call, _req, res) => void res.writeHead(404).end('{}'));
    const entry = (interval: number) => ({
      upstreams: [
        { name: 'replicas', servers: [a, b].map((u) => ({ url: u.url })), health_interval: interval, health_paths: ['/health'] },
        { name: 'hosted', url: backup.url },
      ],
      models: [
        { id: MODEL, upstream: 'replicas', context_length: 8192, max_output_tokens: 1024, fallbacks: ['acme/backup'] },
        { id: 'acme/backup', upstream: 'hosted', context_length: 8192, max_output_tokens: 1024 },
      ],
    });
    backup.behave(reporting(reported, () => backup.url));
    const file = writeModelsFile();
    writeFileSync(file, stringify(entry(0.05)));
    const modelsFile = new ModelsFile(file, { upstreamUrl: backup.url, upstreamApiKey: undefined, env: {} });
    proxy = await startProxy({ store: s.store, upstreamUrl: backup.url, modelsFile, env: { ADMIN_TOKEN } });
    const lines = () => proxy!.logs.filter((l) => l.includes('no server of the pool passed its first health check'));
    await eventually(async () => expect(lines()).toHaveLength(2));
    for (const u of [a, b]) {
      const line = JSON.parse(lines().find((l) => l.includes(u.url))!);
      expect(line).toMatchObject({ pool: 'replicas', path: '/health', status: 404 });
      expect(line.fix).toContain('health_interval: 0');
    }

    const res = await post();
    expect(res.status).toBe(200);
    expect(res.headers['x-tokenmeter-model']).toBe('acme/backup');
    const metric = await proxy.metrics.registry.getSingleMetricAsString('tokenmeter_upstream_fallbacks_total');
    expect(metric).toContain(`model="${MODEL}",fallback="acme/backup",reason="unhealthy"} 1`);
    const view = async () =>
      (await request(proxy!.url).get('/admin/upstreams').set('authorization', `Bearer ${ADMIN_TOKEN}`)).body.data as {
        name: string;
        fallbacks: Record<string, number>;
        servers: { healthy: boolean }[];
      }[];
    const before = (await view()).find((p) => p.name === 'replicas')!;
    expect(before).toMatchObject({ fallbacks: { unhealthy: 1, failed: 0, overloaded: 0 } });
    expect(before.servers.map((v) => v.healthy)).toEqual([false, false]);

    // Checks turned off: the servers are trusted again at once, without a restart.
    writeFileSync(file, stringify(entry(0)));
    await modelsFile.reload();
    a.behave(reporting(reported, () => a.url));
    b.behave(reporting(reported, () => b.url));
    expect((await view()).find((p) => p.name === 'replicas')!.servers.map((v) => v.healthy)).toEqual([true, true]);
    const after = await post();
    expect(after.status).toBe(200);
    expect(after.headers['x-tokenmeter-model']).toBeUndefined();
    expect(posts(a.calls) + posts(b.calls)).toBe(1);
  });
});
