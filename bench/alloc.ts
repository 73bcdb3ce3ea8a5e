/**
 * `npm run bench:alloc`: bytes the target allocates per JSON request and per stream, from V8's own GC trace
 * (`--trace-gc-nvp` reports what was allocated since the previous GC). Unlike CPU time, an allocation count barely
 * moves with the machine's load, so it is the figure to develop against on a busy machine. Both tokenmeter (Redis)
 * and the bare passthrough are measured, a fixed number of requests each, between two forced full GCs.
 */
import { spawn } from 'node:child_process';
import { freePort } from '../test/helpers/redis-server';
import { closedLoop, type Endpoint } from './load';
import { killAllOnExit, startProcess } from './processes';
import { compileServers, redisProcess, serverProcess } from './servers';
import { endpoint, jsonBody, NO_KEY, settings, streamBody } from './workload';

const CONNECTIONS = 16;
const WARMUP_MS = 3_000;
const MEASURED_MS = 4_000;
const PACED_CONNECTIONS = 200;

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
function startTraced(server: string, env: Record<string, string>): Promise<Traced> {
  const plan = serverProcess(server, server, env, ['--trace-gc-nvp']);
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
        if (m) {
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

async function main(): Promise<void> {
  compileServers();
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));
  const upstreamUrl = `http://127.0.0.1:${upstream.ready.port}`;
  const targets = [
    ['passthrough', 'passthrough-server', { UPSTREAM_ORIGIN: upstreamUrl }],
    ['tokenmeter (Redis)', 'tokenmeter-server', { UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: `redis://127.0.0.1:${redisPort}` }],
  ] as const;
  const rows: string[] = [];
  for (const [label, server, env] of targets) {
    const t = await startTraced(server, env);
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
  process.stdout.write(
    `\n| target | KiB per JSON request | KiB per stream | KiB per paced stream |\n|:--|--:|--:|--:|\n${rows.join('\n')}\n`,
  );
}

killAllOnExit(log);
main().catch((err: Error) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
