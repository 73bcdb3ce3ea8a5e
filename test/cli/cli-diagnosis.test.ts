/**
 * The CLI's first minutes, through the built CLI: global options before or after the subcommand, --help naming its
 * variables, and a message naming the actual problem for each usual slip (a /v1 URL, no scheme, a server that is not
 * tokenmeter, a tokenmeter without ADMIN_TOKEN, a secret where a key id goes); `accounts list` shows balances.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cliFixture } from '../helpers/cli-fixture';
import { runCli, startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { writeModelsFile } from '../helpers/models-file';

const ADMIN = 'cli-diagnosis-admin-token-0123';

jest.setTimeout(60_000);

/** A server that is not tokenmeter, answering every request with `status`, `type` and `body`. */
async function otherServer(status: number, type: string, body: string): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(status, { 'content-type': type }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('the CLI’s global options and diagnoses', () => {
  const f = cliFixture(ADMIN, 'clidiag');
  const token = { TOKENMETER_ADMIN_TOKEN: ADMIN };

  it('takes --url, --admin-token and --json before the subcommand as after it', async () => {
    const before = await runCli(['--url', f.proxy.url, '--admin-token', ADMIN, '--json', 'keys', 'create', '--tokens', '10']);
    expect(before.stderr).toBe('');
    expect(JSON.parse(before.stdout)).toMatchObject({ balance: 10 });
    const after = await runCli(['keys', 'list', '--url', f.proxy.url, '--json'], token);
    expect(JSON.parse(after.stdout).map((k: { id: string }) => k.id)).toContain(JSON.parse(before.stdout).id);
    const mixed = await runCli(['--json', 'keys', 'list', '--url', f.proxy.url, '--admin-token', ADMIN]);
    expect(JSON.parse(mixed.stdout)).toEqual(JSON.parse(after.stdout));
  });

  it('names TOKENMETER_URL and TOKENMETER_ADMIN_TOKEN in --help, and the global options under each command', async () => {
    const help = await runCli(['--help']);
    expect(help.stdout).toContain('TOKENMETER_URL');
    expect(help.stdout).toContain('TOKENMETER_ADMIN_TOKEN');
    const sub = await runCli(['keys', 'show', '--help']);
    expect(sub.stdout).toMatch(/Global Options:[\s\S]*--url[\s\S]*TOKENMETER_URL/);
  });

  it.each([
    ['ends in /v1', (url: string) => `${url}/v1`, (url: string) => `drop /v1, the admin API is at the server's root: --url ${url}.`],
    ['has no scheme', (url: string) => url.slice('http://'.length), (url: string) => `give the scheme, http:// or https:// (${url}).`],
  ])('says what is wrong with a URL that %s, before calling anything', async (_slip, slip, says) => {
    const res = await runCli(['keys', 'list', '--url', slip(f.proxy.url)], token);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`tokenmeter: --url ${slip(f.proxy.url)}: ${says(f.proxy.url)}\n`);
  });

  it.each([
    [200, 'text/html; charset=utf-8', '<!doctype html><p>Welcome</p>'],
    [404, 'application/json', '{"detail":"Not Found"}'],
    // The stand-in's (and many an OpenAI-shaped server's) 404: an error body, but not one tokenmeter writes.
    [404, 'application/json', '{"error":{"message":"no route GET /admin/keys","type":"NotFoundError","param":null,"code":404}}'],
  ])('says a server that answers %d %s is not tokenmeter, with what came back', async (status, type, body) => {
    const other = await otherServer(status, type, body);
    try {
      const res = await runCli(['keys', 'list', '--url', other.url], token);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(
        `tokenmeter: ${other.url} is not tokenmeter: GET /admin/keys answered ${status} ${type}. Check --url or TOKENMETER_URL.\n`,
      );
    } finally {
      other.server.close();
    }
  });

  it('says the admin API is off only for a tokenmeter started without ADMIN_TOKEN', async () => {
    let bare: ProxyProcess | undefined;
    try {
      bare = await startProxyProcess({ UPSTREAM_URL: f.upstream.url, MODELS_FILE: writeModelsFile() });
      const res = await runCli(['keys', 'list', '--url', bare.url], token);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`tokenmeter: ${bare.url} has no admin API: start the proxy with ADMIN_TOKEN set.\n`);
    } finally {
      await bare?.stop();
    }
  });

  it('shows a key by the start of its secret, and says it wants a key id for anything else', async () => {
    const made = JSON.parse(
      (await runCli(['keys', 'create', '--name', 'by-secret', '--json'], { ...token, TOKENMETER_URL: f.proxy.url })).stdout,
    );
    const env = { ...token, TOKENMETER_URL: f.proxy.url };
    for (const given of [made.key, made.key.slice(0, 16)]) {
      const shown = await runCli(['keys', 'show', given, '--json'], env);
      expect(JSON.parse(shown.stdout)).toMatchObject({ id: made.id, name: 'by-secret' });
    }
    const unknown = await runCli(['keys', 'show', 'sk-notakeyatall-0000'], env);
    expect(unknown.stderr).toBe(
      "tokenmeter: no key's secret starts with sk-notakeyat…: give at least its shown prefix, or the key id (key_…).\n",
    );
    const neither = await runCli(['keys', 'show', 'demo'], env);
    expect(neither.stderr).toBe("tokenmeter: keys show takes a key id (key_…) or the start of a key's secret (sk-…), not demo.\n");
  });

  it('lists accounts with their balances', async () => {
    const env = { ...token, TOKENMETER_URL: f.proxy.url };
    const made = JSON.parse((await runCli(['accounts', 'create', '--name', 'funded', '--tokens', '12345', '--json'], env)).stdout);
    const list = await runCli(['accounts', 'list', '--search', 'funded'], env);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+EMAIL\s+NAME\s+ROLE\s+STATUS\s+BALANCE\s+RESERVED\s+DEBT\s+PASSWORD\s+CREATED$/);
    expect(list.stdout).toMatch(new RegExp(`^${made.id}\\s+-\\s+funded\\s+member\\s+active\\s+12,345\\s+0\\s+0\\s+no\\s`, 'm'));
  });
});
