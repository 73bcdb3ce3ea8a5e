/**
 * `npm run bench:profile`: runs tokenmeter (Redis store) under `node --cpu-prof`, once under JSON load and once
 * under stream load, and summarizes each profile's measured window into bench/results/profiles/.
 * `npm run bench:profile -- passthrough` profiles the bare passthrough instead, for comparison.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../test/helpers/redis-server';
import { summarize } from './cpu-profile-summary';
import { closedLoop } from './load';
import { canPin, killAllOnExit, pinSelf, startProcess } from './processes';
import { compileServers, redisProcess, serverProcess } from './servers';
import { endpoint, jsonBody, NO_KEY, settings, streamBody } from './workload';

const OUT = join(__dirname, 'results', 'profiles');
const WARMUP_MS = 3_000;
const PROFILED_MS = 10_000;

const log = (line: string) => process.stderr.write(`profile: ${line}\n`);

async function main(): Promise<void> {
  const passthrough = process.argv[2] === 'passthrough';
  const server = passthrough ? 'passthrough-server' : 'tokenmeter-server';
  if (canPin) pinSelf(1);
  mkdirSync(OUT, { recursive: true });
  log('compiling the server processes (tsc)');
  compileServers();
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));

  for (const [kind, body] of [
    ['json', jsonBody],
    ['stream', streamBody],
  ] as const) {
    const spawned = performance.now();
    const name = `${passthrough ? 'passthrough-' : ''}${kind}`;
    const env: Record<string, string> = passthrough
      ? { UPSTREAM_ORIGIN: `http://127.0.0.1:${upstream.ready.port}` }
      : { UPSTREAM_URL: `http://127.0.0.1:${upstream.ready.port}/v1`, REDIS_URL: `redis://127.0.0.1:${redisPort}` };
    const nodeArgs = ['--cpu-prof', '--cpu-prof-dir', OUT, '--cpu-prof-name', `${name}.cpuprofile`];
    const target = await startProcess({ ...serverProcess(name, server, env, nodeArgs), core: canPin ? 0 : undefined });
    const e = endpoint(Number(target.ready.port), typeof target.ready.key === 'string' ? target.ready.key : NO_KEY, body);
    await closedLoop(e, settings.connections, WARMUP_MS);
    // The profile starts a little after the spawn, so this skips at least start-up and warm-up.
    const fromMs = performance.now() - spawned;
    const r = await closedLoop(e, settings.connections, PROFILED_MS);
    log(`${name}: ${r.completed} requests (${r.failed} failed) in ${(r.elapsedMs / 1000).toFixed(1)} s`);
    await target.stop();
    const file = join(OUT, `${name}.cpuprofile`);
    const title = `# ${passthrough ? 'passthrough' : 'tokenmeter'} CPU profile: ${kind} load, ${settings.connections} connections`;
    const summary = `${title}\n\n${summarize(JSON.parse(readFileSync(file, 'utf8')), fromMs)}`;
    writeFileSync(join(OUT, `${name}.md`), summary);
    process.stdout.write(`${summary}\n`);
    log(`wrote ${file} and ${name}.md`);
  }
  await upstream.stop();
  await redis.stop();
}

killAllOnExit(log);
main().catch((err: Error) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
