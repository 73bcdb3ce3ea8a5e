/**
 * An upstream's identity is its name; its URL is a secret until proven otherwise: a server's query is kept on every
 * call, and /metrics and /admin/upstreams show servers by scheme://host:port alone (never path, query or userinfo).
 * Upstream names and models' own URLs are two namespaces: an upstream named like a model's `upstream_url` has a pool of
 * its own, so the cheap model is answered by its own server.
 */
import request from 'supertest';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { startProxy, chatBody, settled, type ProxyUnderTest } from '../helpers/proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

const ADMIN_TOKEN = 'identity-admin-token-0123456789abcdef';
const SECRET_QUERY = 'api-version=2025-01-01&sig=s3cr3t-query';

describe('upstream identity (redis store)', () => {
  let s: StoreUnderTest;
  let dear: TestUpstream;
  let cheap: TestUpstream;
  let proxy: ProxyUnderTest;

  beforeEach(async () => {
    s = await makeStore('redis');
    dear = await startUpstream();
    cheap = await startUpstream();
    proxy = await startProxy({
      store: s.store,
      upstreamUrl: dear.url,
      env: { ADMIN_TOKEN },
      // The cheap model's upstream is named exactly like the plain model's own URL.
      upstreams: [{ name: dear.url, servers: [{ url: cheap.url }], retries: 1 }],
      models: [
        { id: 'acme/dear', upstream_url: `${dear.url}/?${SECRET_QUERY}`, quota_weight: { input: 10, output: 10 } },
        { id: 'acme/plain', upstream_url: dear.url, quota_weight: { input: 10, output: 10 } },
        { id: 'acme/cheap', upstream: dear.url },
      ],
    });
  });
  afterEach(async () => {
    await proxy.close();
    await dear.close();
    await cheap.close();
    await s.close();
  });

  const post = (secret: string, model: string) =>
    request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(chatBody({ model }));

  it('sends each model to its own server, with the query of its URL on every call', async () => {
    const key = await keyWithTokens(s.store, 100_000);
    await post(key.secret, 'acme/plain').expect(200);
    await post(key.secret, 'acme/cheap').expect(200);
    await post(key.secret, 'acme/dear').expect(200);
    await post(key.secret, 'acme/cheap').expect(200);
    expect(dear.calls.map((c) => c.path)).toEqual(['/v1/chat/completions', `/v1/chat/completions?${SECRET_QUERY}`]);
    expect(cheap.calls.map((c) => c.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    await settled(proxy);
  });

  it('shows servers on /metrics and /admin/upstreams by scheme://host:port, never their path or query', async () => {
    const key = await keyWithTokens(s.store, 100_000);
    await post(key.secret, 'acme/dear').expect(200);
    await post(key.secret, 'acme/cheap').expect(200);
    await settled(proxy);
    const metrics = (await request(proxy.url).get('/metrics')).text;
    const admin = (await request(proxy.url).get('/admin/upstreams').set('authorization', `Bearer ${ADMIN_TOKEN}`).expect(200)).text;
    for (const text of [metrics, admin]) {
      expect(text).not.toContain('s3cr3t');
      expect(text).not.toContain('api-version');
      expect(text).not.toMatch(/server="[^"]*\/v1/);
      expect(text).not.toMatch(/\/\/[^/"\s]*@/);
    }
    expect(metrics).toContain(`server="${new URL(dear.url).origin}"`);
    expect(metrics).toContain(`server="${new URL(cheap.url).origin}"`);
    const pools = JSON.parse(admin).data as { name: string; servers: { url: string }[] }[];
    expect(pools.map((p) => [p.name, p.servers[0].url]).sort()).toEqual(
      [
        ['acme/dear', new URL(dear.url).origin],
        ['acme/plain', new URL(dear.url).origin],
        [dear.url, new URL(cheap.url).origin],
      ].sort(),
    );
  });
});
