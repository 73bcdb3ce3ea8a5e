/**
 * docs/deployment.md's first run, without a Docker engine: the environment docker-compose.yml gives tokenmeter, from
 * .env.example as shipped and after the doc's steps, run through the server's configuration and the built server
 * itself; and the doc's first-operator command, run as `docker compose exec` runs it in the image (from /app).
 * Only where Redis and the journal are differs: the test's redis-server and a scratch file.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../src/config/config';
import { startRedisProxyProcess, type RedisProxy } from './helpers/redis-proxy';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..');
const DOC = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8');

/** An env file's `KEY=VALUE` lines, as docker compose reads .env (comments and blank lines skipped). */
function readEnvFile(path: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^\s*([A-Za-z_]\w*)=(.*)$/.exec(line);
    if (m) vars[m[1]] = m[2].trim();
  }
  return vars;
}

/**
 * The tokenmeter service's `environment:` with compose's interpolation done (`${V}`, `${V:-d}`, `${V-d}`, `${V:?err}`,
 * `${V?err}`), less REDIS_URL and JOURNAL_FILE, which the test points at its own Redis and a scratch file, and
 * LEDGER_DATABASE_URL.
 */
function composeEnvironment(vars: Record<string, string>): Record<string, string> {
  const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries<string | number>(compose.services.tokenmeter.environment)) {
    env[name] = String(value).replace(/\$\{(\w+)(?:(:?)([-?])([^}]*))?\}/g, (_, v: string, colon: string, op: string, arg: string) => {
      const missing = vars[v] === undefined || (colon === ':' && vars[v] === '');
      if (op === '-' && missing) return arg;
      if (op === '?' && missing) throw new Error(`docker compose: ${v}: ${arg}`);
      return vars[v] ?? '';
    });
  }
  delete env.REDIS_URL;
  delete env.JOURNAL_FILE;
  // The archive's PostgreSQL is compose's service; the test has none (the archive is tested in test/ledger-archive).
  delete env.LEDGER_DATABASE_URL;
  return env;
}

/** Runs `script` with sh, as the doc's reader (or `sh -c` in the container) would. */
function sh(
  script: string,
  options: { cwd: string; env?: Record<string, string>; input?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      'sh',
      ['-c', script],
      { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(options.input ?? '');
  });
}

describe('the compose stack on a first run', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tm-deploy-'));
  const started: RedisProxy[] = [];
  afterAll(async () => {
    for (const rp of started) await rp.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('starts tokenmeter on .env.example as shipped, instead of restarting it in a loop on a placeholder ADMIN_TOKEN', async () => {
    const env = composeEnvironment(readEnvFile(join(ROOT, '.env.example')));
    // The server's parsing of the environment: a bad value would throw its one line here.
    expect(() => loadConfig(env)).not.toThrow();
    const rp = await startRedisProxyProcess(env);
    started.push(rp);
    expect((await request(rp.proxy.url).get('/readyz')).status).toBe(200);
  });

  it("makes an admin token the stack accepts, then the first operator inside the container, who signs in, by the doc's commands", async () => {
    // The quick start's `sed` line fills ADMIN_TOKEN in the copied .env.
    copyFileSync(join(ROOT, '.env.example'), join(scratch, '.env'));
    const fill = /^sed -i .*ADMIN_TOKEN.* \.env\b/m.exec(DOC);
    expect(fill).not.toBeNull();
    expect(await sh(fill![0], { cwd: scratch })).toMatchObject({ code: 0 });
    const vars = readEnvFile(join(scratch, '.env'));
    expect(vars.ADMIN_TOKEN).toMatch(/^[0-9a-f]{64}$/);

    const env = composeEnvironment(vars);
    expect(loadConfig(env).adminToken).toBe(vars.ADMIN_TOKEN);
    const rp = await startRedisProxyProcess(env);
    started.push(rp);

    // `docker compose exec -T tokenmeter sh -c '…'`: the image's working directory is /app, holding dist/ as here.
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(runtime).toMatch(/^WORKDIR \/app$/m);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    const exec = /docker compose exec -T tokenmeter sh -c '([^']+)'/.exec(DOC);
    expect(exec).not.toBeNull();
    const password = 'a long passphrase';
    // The container's environment is the service's; the CLI's default URL, 127.0.0.1:8080, is the test proxy's here.
    const created = await sh(exec![1], { cwd: ROOT, env: { ...env, TOKENMETER_URL: rp.proxy.url }, input: `${password}\n` });
    expect(created).toMatchObject({ code: 0, stderr: '' });

    const email = /--email (\S+)/.exec(exec![1])![1];
    const login = await request(rp.proxy.url).post('/console/api/login').send({ email, password });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ email, role: 'admin' });
  });
});
