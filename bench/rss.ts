/**
 * The memory probe: RSS per open paced stream, and where it lives (JS heap, external buffers, the rest), then CPU per
 * paced stream from a second batch, for the passthrough and tokenmeter on Redis, on the Node that runs it (`npx tsx
 * bench/rss.ts`, or with another node first on PATH). Options for the targets' node go in BENCH_NODE_ARGS (`--max-semi-space-size=4`, say).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { closedLoop, holdStreams } from './load';
import { freePort } from '../test/helpers/redis-server';
import { killAllOnExit, startProcess } from './processes';
import { cpuMs, rssKiB } from './proc-stats';
import { compileServers, redisProcess, serverProcess } from './servers';
import { endpoint, NO_KEY, settings, streamBody, jsonBody } from './workload';

interface Memory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const streams = Number(process.env.BENCH_STREAMS ?? settings.openStreams);

async function collected(pid: number, file: string): Promise<Memory & { vmRss: number }> {
  process.kill(pid, 'SIGUSR2');
  await sleep(400);
  const m = JSON.parse(readFileSync(file, 'utf8')) as Memory;
  return { ...m, vmRss: rssKiB(pid) * 1024 };
}

async function probe(
  label: string,
  options: ReturnType<typeof serverProcess>,
  key: (ready: Record<string, unknown>) => string,
): Promise<void> {
  const file = join(mkdtempSync(join(tmpdir(), 'tm-rss-')), 'memory.json');
  const started = await startProcess({ ...options, env: { ...options.env, BENCH_MEMORY_FILE: file } });
  const port = Number(started.ready.port);
  const k = key(started.ready);
  await closedLoop(endpoint(port, k, jsonBody), 4, 700);
  await closedLoop(endpoint(port, k, streamBody), 4, 700);
  await sleep(300);
  const before = await collected(started.pid, file);
  const paced = endpoint(port, k, streamBody, { 'x-mock-chunk-delay-ms': String(settings.pacedChunkDelayMs) });
  const held = await holdStreams(paced, streams, async () => {
    await sleep(300);
    return collected(started.pid, file);
  });
  const per = (f: keyof Memory | 'vmRss') => ((held.during[f] - before[f]) / held.open / 1024).toFixed(1);
  // CPU per paced stream from a second batch of its own, as bench/measure.ts does: the GCs asked for above are not its.
  const cpuBefore = cpuMs(started.pid);
  const timed = await holdStreams(paced, streams, async () => undefined);
  const pacedCpuUs = ((cpuMs(started.pid) - cpuBefore) * 1000) / timed.completed;
  console.log(
    `${label} (${process.version}${nodeArgs.length ? ' ' + nodeArgs.join(' ') : ''}): ${held.open} streams open; KiB per stream: ` +
      `RSS ${per('vmRss')}, heap ${per('heapTotal')} (used ${per('heapUsed')}), external ${per('external')} (array buffers ${per('arrayBuffers')}); ` +
      `CPU per paced stream ${pacedCpuUs.toFixed(0)} µs; failed ${held.failed + timed.failed}`,
  );
  await started.stop();
}

async function main(): Promise<void> {
  killAllOnExit(console.error);
  compileServers();
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const upstreamUrl = `http://127.0.0.1:${Number(upstream.ready.port)}`;
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));
  await probe('passthrough', serverProcess('passthrough', 'passthrough-server', { UPSTREAM_ORIGIN: upstreamUrl }, nodeArgs), () => NO_KEY);
  await probe(
    'tokenmeter (Redis)',
    serverProcess(
      'tokenmeter',
      'tokenmeter-server',
      { UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: `redis://127.0.0.1:${redisPort}` },
      nodeArgs,
    ),
    (ready) => String(ready.key),
  );
  await upstream.stop();
  await redis.stop();
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
