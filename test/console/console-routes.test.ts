/** The console's serving: where pages and assets answer, with which security headers, and what stays the API's. */
import { MemoryStore } from '../../src/store/memory/memory-store';
import { startProxy, type ProxyUnderTest } from '../helpers/proxy';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

const ATTACK = '<img src=x onerror=alert(1)>';

describe('console routes', () => {
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;
  beforeAll(async () => {
    upstream = await startUpstream();
    proxy = await startProxy({
      store: new MemoryStore(),
      upstreamUrl: upstream.url,
      models: [
        { owned_by: ATTACK, pricing: { input: 0.5, output: 1.5, currency: 'EUR' } },
        { id: 'acme/vision', capabilities: { vision: true, tools: false } as never },
      ],
    });
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('/ redirects to the console', async () => {
    const res = await fetch(`${proxy.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/console/');
  });

  test.each(['/console/', '/console/keys', '/console/admin/accounts', '/console/models', '/console/assets/console.js'])(
    '%s carries a strict CSP and refuses framing (stops injected scripts and clickjacking)',
    async (path) => {
      const res = await fetch(`${proxy.url}${path}`);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    },
  );

  test('every page path answers with the app, whose page has no inline script or style', async () => {
    const res = await fetch(`${proxy.url}/console/usage`);
    const page = await res.text();
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page).toContain('<script defer src="/console/assets/console.js"></script>');
    expect(page).not.toMatch(/<script>|<style|style=/);
  });

  test.each(['/favicon.ico', '/console/favicon.svg'])('%s answers with the icon, an SVG image (no 404 on every page)', async (path) => {
    const res = await fetch(`${proxy.url}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^]*<\/svg>$/);
  });

  test('the app page and the model page link the icon', async () => {
    for (const path of ['/console/usage', '/console/models']) {
      expect(await (await fetch(`${proxy.url}${path}`)).text()).toContain(
        '<link rel="icon" href="/console/favicon.svg" type="image/svg+xml" />',
      );
    }
  });

  test('the API paths are not the app: an unknown one is a JSON 404', async () => {
    const res = await fetch(`${proxy.url}/console/api/nothing-here`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  test('an unknown asset is a 404, not the app page', async () => {
    const res = await fetch(`${proxy.url}/console/assets/missing.js`);
    expect(res.status).toBe(404);
  });

  test('the model page lists the catalog with limits, capabilities and pricing, escaping the models file (stops stored XSS)', async () => {
    const res = await fetch(`${proxy.url}/console/models`);
    const page = await res.text();
    expect(page).toContain('<code>acme/chat-small</code>');
    expect(page).toContain('<code>acme/vision</code>');
    expect(page).toContain('8,192 tokens');
    expect(page).toContain('0.5 EUR');
    expect(page).toContain('1.5 EUR');
    expect(page).toMatch(/<dt>Tools<\/dt>\s*<dd>no<\/dd>/);
    expect(page).toMatch(/<dt>Sampling parameters<\/dt>\s*<dd>all<\/dd>/);
    expect(page).toContain('by &lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain(ATTACK);
    expect(page).not.toContain('<script');
  });
});
