/** The benchmark's node server processes: compiled once with tsc, then started as plain `node` on the output. */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startNodeArgs } from '../test/helpers/processes';
import type { StartOptions } from './processes';

const ROOT = join(__dirname, '..');
const BUILD = join(__dirname, '.build/tokenmeter-bench/bench');

export function compileServers(): void {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(__dirname, 'tsconfig.servers.json')], {
    stdio: 'inherit',
  });
  copyLua(ROOT, join(__dirname, '.build/tokenmeter-bench'));
}

/**
 * The Redis store's .lua files beside the compiled loader that reads them (tsc copies only TypeScript; the package's
 * build does the same with scripts/build-lua.js): from a tree whose store has them into its compiled output.
 */
export function copyLua(tree: string, out: string): void {
  const lua = join(tree, 'src/store/redis/lua');
  if (existsSync(lua)) cpSync(lua, join(out, 'src/store/redis/lua'), { recursive: true });
}

/**
 * What every tokenmeter target is started with: the mock paces a stream by a request header, which tokenmeter forwards
 * upstream only when the operator lists it (headers go upstream by allow-list since 6d261d0). Without it the "paced"
 * streams are not paced, and RSS and CPU per paced stream measure nothing.
 */
export const TOKENMETER_ENV = { UPSTREAM_FORWARD_HEADERS: 'x-mock-chunk-delay-ms' };

/**
 * How to start one compiled server (`mock-upstream`, `passthrough-server`, `tokenmeter-server`) on a free port; with
 * --expose-gc, so that SIGUSR2 can collect its garbage before RSS is read (see gc-on-signal.ts). tokenmeter runs with
 * the node flags of `npm start`, as operators run it; the other servers with node's defaults.
 */
export function serverProcess(name: string, server: string, env: Record<string, string>, nodeArgs: string[] = []): StartOptions {
  const product = server === 'tokenmeter-server' ? startNodeArgs() : [];
  return {
    name,
    command: process.execPath,
    args: ['--expose-gc', ...product, ...nodeArgs, join(BUILD, `${server}.js`)],
    // PORT for the proxies, MOCK_PORT for the mock upstream.
    // The compiled mock sits two folders deeper than its source: it is told where the models file is.
    env: {
      ...process.env,
      PORT: '0',
      MOCK_PORT: '0',
      MODELS_FILE: join(ROOT, 'config/models.yaml'),
      ...(server === 'tokenmeter-server' ? TOKENMETER_ENV : {}),
      ...env,
    },
  };
}

/** A throwaway redis-server on loopback, without persistence. */
export function redisProcess(port: number): StartOptions {
  return {
    name: 'redis-server',
    command: 'redis-server',
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    port,
  };
}
