/**
 * `npm run bench:alloc`: bytes the target allocates per JSON request and per stream, from V8's own GC trace
 * (`--trace-gc-nvp` reports what was allocated since the previous GC). Unlike CPU time, an allocation count barely
 * moves with the machine's load, so it is the figure to develop against on a busy machine. Both tokenmeter (Redis)
 * and the bare passthrough are measured, a fixed number of requests each, between two forced full GCs; revisions given
 * as arguments (`npm run bench:alloc -- b9cbe75`) are built (earlier-build.ts) and measured beside them.
 * `npm run bench:alloc -- --profile [json|stream|responses]` instead samples where today's tokenmeter allocates over the window
 * (gc-on-signal.ts), writes the profile to bench/results/profiles/ and prints bytes per request by function;
 * `--survivors` in place of `--profile` samples only what outlived a scavenge (was promoted, or was still alive at the
 * end): what the young generation's GC pauses copy, where `--profile` shows what they sweep.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/helpers/redis-server';
import { closedLoop, type Endpoint } from './load';
import { killAllOnExit, startProcess, type StartOptions } from './processes';
import { buildEarlier, earlierProcess } from './earlier-build';
import { summarizeHeap } from './heap-profile-summary';
import { compileServers, redisProcess, serverProcess } from './servers';
import { endpoint, jsonBody, NO_KEY, responsesStreamBody, settings, streamBody } from './workload';

const CONNECTIONS = 16;
const WARMUP_MS = 3_000;
const MEASURED_MS = 4_000;
const PACED_CONNECTIONS = 200;
/** No GC follows 1 TiB of allocation: a count this large is a wrapped negative. */
const WRAPPED = 2 ** 40;

const log = (line: string) => process.stderr.write(`alloc: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Traced {
  pid: number;
  port: number;
  key: string;
  /** Bytes allocated as reported by every GC so far, and the number of GCs. */
  allocated(): { bytes: number; gcs: number };
  stop(): void;
}

/** Starts a compiled server with the GC trace on, reading its stdout for the ready line and every GC line. */
function startTraced(server: string, plan: StartOptions): Promise<Traced> {
  const child = spawn(plan.command, plan.args, { env: { ...plan.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let bytes = 0;
  let gcs = 0;
  let buffered = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${server} exited (${code})`)));
    child.stdout.on('data', (c: Buffer) => {
      buffered += c.toString();
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const m = / allocated=(\d+)/.exec(line);
        // Under the sampling heap profiler (`--profile`) V8 has printed an unsigned wrap of a negative count (about
        // 2^64): such a line is left out of the sum, not added as exabytes.
        if (m && Number(m[1]) < WRAPPED) {
          bytes += Number(m[1]);
          gcs++;
        } else if (line.startsWith('{"ready":true')) {
          const ready = JSON.parse(line) as { port: number; key?: string };
          resolve({
            pid: child.pid as number,
            port: ready.port,
            key: ready.key ?? NO_KEY,
            allocated: () => ({ bytes, gcs }),
            stop: () => child.kill('SIGKILL'),
          });
        }
      }
    });
  });
}

/** Allocation per request over a measured window, between two forced full GCs (SIGUSR2, see gc-on-signal.ts). */
async function perRequest(t: Traced, e: Endpoint, connections = CONNECTIONS): Promise<{ kib: number; gcs: number; requests: number }> {
  await closedLoop(e, connections, WARMUP_MS);
  process.kill(t.pid, 'SIGUSR2');
  await sleep(300);
  const before = t.allocated();
  const r = await closedLoop(e, connections, MEASURED_MS);
  await sleep(300);
  process.kill(t.pid, 'SIGUSR2');
  await sleep(300);
  const after = t.allocated();
  return { kib: (after.bytes - before.bytes) / 1024 / r.completed, gcs: after.gcs - before.gcs, requests: r.completed };
}

/** Where today's tokenmeter allocates per JSON request (or stream): a sampling heap profile over the measured window. */
async function profileAllocations(kind: string, survivors: boolean): Promise<void> {
  const dir = join(__dirname, 'results', 'profiles');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `alloc-${kind}${survivors ? '-survivors' : ''}.heapprofile`);
  rmSync(file, { force: true });
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));
  const env = {
    UPSTREAM_URL: `http://127.0.0.1:${upstream.ready.port}/v1`,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    BENCH_ALLOC_PROFILE: file,
    ...(survivors ? { BENCH_ALLOC_SURVIVORS: '1' } : {}),
  };
  const t = await startTraced('tokenmeter (Redis)', serverProcess('tokenmeter', 'tokenmeter-server', env, ['--trace-gc-nvp']));
  try {
    const loads: Record<string, Endpoint> = {
      json: endpoint(t.port, t.key, jsonBody),
      stream: endpoint(t.port, t.key, streamBody),
      responses: endpoint(t.port, t.key, responsesStreamBody, {}, '/v1/responses'),
    };
    if (!loads[kind]) throw new Error(`--profile ${kind}: one of ${Object.keys(loads).join(', ')}`);
    const r = await perRequest(t, loads[kind]);
    // The profile is written once V8 has stopped sampling: seconds for a busy window.
    for (let waited = 0; !existsSync(file) && waited < 30_000; waited += 250) await sleep(250);
    log(`${kind}: ${r.kib.toFixed(1)} KiB per request from the GC trace (${r.requests}); wrote ${file}`);
    const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: Parameters<typeof summarizeHeap>[0] };
    process.stdout.write(`${summarizeHeap(profile.head, r.requests)}\n`);
  } finally {
    t.stop();
    await upstream.stop();
    await redis.stop();
  }
}

async function main(): Promise<void> {
  compileServers();
  const profile = process.argv[2];
  if (profile === '--profile' || profile === '--survivors') return profileAllocations(process.argv[3] ?? 'json', profile === '--survivors');
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));
  const upstreamUrl = `http://127.0.0.1:${upstream.ready.port}`;
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const traced = (server: string, env: Record<string, string>) => serverProcess(server, server, env, ['--trace-gc-nvp']);
  const targets: [string, StartOptions][] = [
    ['passthrough', traced('passthrough-server', { UPSTREAM_ORIGIN: upstreamUrl })],
    ['tokenmeter (Redis)', traced('tokenmeter-server', { UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: redisUrl })],
  ];
  // `npm run bench:alloc -- <revision>…`: tokenmeter as built at each revision too, beside today's.
  const earlier = process.argv.slice(2).map((revision) => buildEarlier(revision));
  for (const build of earlier) {
    const plan = earlierProcess(build, build.label, upstreamUrl, redisUrl);
    targets.push([`tokenmeter (Redis) at ${build.label}`, { ...plan, args: ['--expose-gc', '--trace-gc-nvp', build.server] }]);
  }
  const rows: string[] = [];
  for (const [label, plan] of targets) {
    const t = await startTraced(label, plan);
    try {
      const json = await perRequest(t, endpoint(t.port, t.key, jsonBody));
      const stream = await perRequest(t, endpoint(t.port, t.key, streamBody));
      const pacedHeaders = { 'x-mock-chunk-delay-ms': String(settings.pacedChunkDelayMs) };
      // Paced streams take seconds each: many connections, so the window still holds a few hundred of them.
      const paced = await perRequest(t, endpoint(t.port, t.key, streamBody, pacedHeaders), PACED_CONNECTIONS);
      log(
        `${label}: JSON ${json.kib.toFixed(1)} KiB/request (${json.requests}), stream ${stream.kib.toFixed(1)} KiB/stream ` +
          `(${stream.requests}), paced stream ${paced.kib.toFixed(1)} KiB/stream (${paced.requests})`,
      );
      rows.push(`| ${label} | ${json.kib.toFixed(1)} | ${stream.kib.toFixed(1)} | ${paced.kib.toFixed(1)} |`);
    } finally {
      t.stop();
    }
  }
  await upstream.stop();
  await redis.stop();
  for (const build of earlier) build.cleanup();
  process.stdout.write(
    `\n| target | KiB per JSON request | KiB per stream | KiB per paced stream |\n|:--|--:|--:|--:|\n${rows.join('\n')}\n`,
  );
}

killAllOnExit(log);
main().catch((err: Error) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
