/**
 * Before any test: builds dist/ (server and browser console) once (tests that start the proxy and the CLI as users do run the built files), and
 * gives every worker a real Redis: REDIS_URL when set, else a redis-server of our own on a free port.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startRedisServer } from './redis-server';

export default async function globalSetup(): Promise<void> {
  const root = join(__dirname, '..', '..');
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
  });
  // The same steps as `npm run build` after its tsc: the Lua files copied, the CLI made executable, the console bundled.
  execFileSync(process.execPath, [join(root, 'scripts', 'build-lua.js')], { stdio: 'inherit' });
  execFileSync(process.execPath, [join(root, 'scripts', 'build-bin.js')], { stdio: 'inherit' });
  execFileSync(process.execPath, [join(root, 'scripts', 'build-console.js')], { stdio: 'inherit' });
  if (process.env.REDIS_URL) {
    process.env.TEST_REDIS_URL = process.env.REDIS_URL;
    return;
  }
  const server = await startRedisServer();
  process.env.TEST_REDIS_URL = server.url;
  (globalThis as { __redisServer?: typeof server }).__redisServer = server;
}
