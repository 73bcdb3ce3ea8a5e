/**
 * `npm run bench:profile`: runs tokenmeter (Redis store) under `node --cpu-prof`, once under JSON load and once
 * under stream load, and summarizes each profile's measured window into bench/results/profiles/.
 * `npm run bench:profile -- passthrough` profiles the bare passthrough instead, for comparison, and
 * `npm run bench:profile -- <revision>` tokenmeter as built at that commit (earlier-build.ts). `PROFILE_KINDS` picks the
 * loads (default `json,stream`; also `responses` and `embeddings`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../test/helpers/redis-server';
import { summarize } from './cpu-profile-summary';
import { closedLoop } from './load';
import { buildEarlier, earlierProcess, type EarlierBuild } from './earlier-build';
import { canPin, killAllOnExit, pinSelf, startProcess } from './processes';
import { compileServers, redisProcess, serverProcess } from './servers';
import { embeddingsBody, endpoint, jsonBody, NO_KEY, responsesStreamBody, settings, streamBody } from './workload';

const LOADS = {
  json: { body: jsonBody, path: undefined },
  stream: { body: streamBody, path: undefined },
  responses: { body: responsesStreamBody, path: '/v1/responses' },
  embeddings: { body: embeddingsBody, path: '/v1/embeddings' },
} as const;
type Load = keyof typeof LOADS;

const OUT = join(__dirname, 'results', 'profiles');
const WARMUP_MS = 3_000;
const PROFILED_MS = 10_000;

const log = (line: string) => process.stderr.write(`profile: ${line}\n`);

async function main(): Promise<void> {
  const passthrough = process.argv[2] === 'passthrough';
  const server = passthrough ? 'passthrough-server' : 'tokenmeter-server';
  const kinds = (process.env.PROFILE_KINDS ?? 'json,stream').split(',') as Load[];
  for (const k of kinds) if (!(k in LOADS)) throw new Error(`PROFILE_KINDS: ${k} is not one of ${Object.keys(LOADS).join(', ')}`);
  const earlier: EarlierBuild | undefined = process.argv[2] && !passthrough ? buildEarlier(process.argv[2]) : undefined;
  const prefix = passthrough ? 'passthrough-' : earlier ? `${process.argv[2]}-` : '';
  if (canPin) pinSelf(1);
  mkdirSync(OUT, { recursive: true });
  log('compiling the server processes (tsc)');
  compileServers();
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));

  for (const kind of kinds) {
    const spawned = performance.now();
    const name = `${prefix}${kind}`;
    const env: Record<string, string> = passthrough
      ? { UPSTREAM_ORIGIN: `http://127.0.0.1:${upstream.ready.port}` }
      : { UPSTREAM_URL: `http://127.0.0.1:${upstream.ready.port}/v1`, REDIS_URL: `redis://127.0.0.1:${redisPort}` };
    const nodeArgs = ['--cpu-prof', '--cpu-prof-dir', OUT, '--cpu-prof-name', `${name}.cpuprofile`];
    const plan = earlier
      ? earlierProcess(earlier, name, `http://127.0.0.1:${upstream.ready.port}`, `redis://127.0.0.1:${redisPort}`)
      : serverProcess(name, server, env);
    plan.args.splice(plan.args.length - 1, 0, ...nodeArgs);
    const target = await startProcess({ ...plan, core: canPin ? 0 : undefined });
    const { body, path } = LOADS[kind];
    const e = endpoint(Number(target.ready.port), typeof target.ready.key === 'string' ? target.ready.key : NO_KEY, body, {}, path);
    await closedLoop(e, settings.connections, WARMUP_MS);
    // The profile starts a little after the spawn, so this skips at least start-up and warm-up.
    const fromMs = performance.now() - spawned;
    const r = await closedLoop(e, settings.connections, PROFILED_MS);
    log(`${name}: ${r.completed} requests (${r.failed} failed) in ${(r.elapsedMs / 1000).toFixed(1)} s`);
    await target.stop();
    const file = join(OUT, `${name}.cpuprofile`);
    const title = `# ${passthrough ? 'passthrough' : `tokenmeter${earlier ? ` at ${earlier.label}` : ''}`} CPU profile: ${kind} load, ${settings.connections} connections`;
    const summary = `${title}\n\n${summarize(JSON.parse(readFileSync(file, 'utf8')), fromMs)}`;
    writeFileSync(join(OUT, `${name}.md`), summary);
    process.stdout.write(`${summary}\n`);
    log(`wrote ${file} and ${name}.md`);
  }
  await upstream.stop();
  await redis.stop();
  earlier?.cleanup();
}

killAllOnExit(log);
main().catch((err: Error) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
