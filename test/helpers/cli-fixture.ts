/** The CLI tests' setup: a test upstream and the built proxy on a real redis-server, and `cli(...)` pointed at it. */
import { randomBytes } from 'node:crypto';
import { startProxyProcess, runCli, type ProxyProcess } from './processes';
import { writeModelsFile } from './models-file';
import { testRedisUrl } from './stores';
import { startUpstream, type TestUpstream } from './upstream';

export interface CliFixture {
  upstream: TestUpstream;
  proxy: ProxyProcess;
  /** The CLI's environment: the proxy's URL and admin token. */
  env: Record<string, string>;
  cli(...args: string[]): ReturnType<typeof runCli>;
}

/** Registers beforeAll/afterAll in the calling describe block; the fixture's fields are set once beforeAll ran. */
export function cliFixture(adminToken: string, prefix: string): CliFixture {
  const f = { env: {} } as CliFixture;
  f.cli = (...args) => runCli(args, f.env);
  beforeAll(async () => {
    f.upstream = await startUpstream();
    f.proxy = await startProxyProcess({
      ADMIN_TOKEN: adminToken,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: `${prefix}${randomBytes(3).toString('hex')}:`,
      UPSTREAM_URL: f.upstream.url,
      MODELS_FILE: writeModelsFile(),
    });
    f.env = { TOKENMETER_URL: f.proxy.url, TOKENMETER_ADMIN_TOKEN: adminToken };
  });
  afterAll(async () => {
    await f.proxy?.stop();
    await f.upstream?.close();
  });
  return f;
}
