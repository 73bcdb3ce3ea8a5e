/** The setup most proxy tests share: a fresh store, test upstream and in-process proxy for each test, closed after. */
import { RedisResponseOwners } from '../../src/store/redis/redis-response-owners';
import { makeStore, type StoreKind, type StoreUnderTest } from './stores';
import { startUpstream, type TestUpstream } from './upstream';
import { startProxy, type ProxyUnderTest } from './proxy';

export interface ProxyFixture {
  s: StoreUnderTest;
  upstream: TestUpstream;
  proxy: ProxyUnderTest;
}

/**
 * Registers beforeEach/afterEach hooks in the calling describe block; the returned object holds the current test's
 * store, upstream and proxy. `options` are startProxy's, less the store and upstream it wires itself.
 */
export function proxyFixture(
  kind: StoreKind,
  options: Omit<Parameters<typeof startProxy>[0], 'store' | 'upstreamUrl'> = {},
  storeOptions: Parameters<typeof makeStore>[1] = {},
): ProxyFixture {
  const t = {} as ProxyFixture;
  beforeEach(async () => {
    t.s = await makeStore(kind, storeOptions);
    t.upstream = await startUpstream();
    // On Redis the stored responses' owners are kept there too, as the proxy started by users keeps them.
    const responses = t.s.redis && new RedisResponseOwners(t.s.redis, { prefix: t.s.prefix });
    t.proxy = await startProxy({ store: t.s.store, upstreamUrl: t.upstream.url, responses, ...options });
  });
  afterEach(async () => {
    await t.proxy.close();
    await t.upstream.close();
    await t.s.close();
  });
  return t;
}
