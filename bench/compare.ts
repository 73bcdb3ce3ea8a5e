/**
 * `npm run bench:compare -- <revision>…`: tokenmeter (Redis) as built at each revision (`.` is the working tree,
 * `passthrough` the bare floor), all started at once on the target core and measured in many short interleaved
 * windows, JSON then streams, each window's order rotated. Per build: CPU per request (median of the windows, and its
 * ratio to the first build in the same round, which cancels the machine's slow drifts), and from V8's GC trace the
 * bytes allocated and promoted and the GC time per request, which hardly move with the machine's load. A build may carry
 * node flags after a `+` each, to measure a flag against the same code: `npm run bench:compare -- .+--max-semi-space-size=8
 * .+--max-semi-space-size=32` (without them, node's defaults).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../test/helpers/redis-server';
import { buildEarlier, buildWorkingTree, type EarlierBuild } from './earlier-build';
import { closedLoop, type Endpoint } from './load';
import { cpuMs } from './proc-stats';
import { canPin, killAllOnExit, pinSelf, startProcess } from './processes';
import { spread, type Spread } from './report';
import { compileServers, redisProcess, serverProcess, TOKENMETER_ENV } from './servers';
import { embeddingsBody, endpoint, jsonBody, NO_KEY, messagesStreamBody, responsesStreamBody, streamBody } from './workload';

const ROUNDS = Number(process.env.COMPARE_ROUNDS ?? 12);
const WINDOW_MS = Number(process.env.COMPARE_WINDOW_MS ?? 1_500);
const CONNECTIONS = Number(process.env.COMPARE_CONNECTIONS ?? 16);
/** The loads measured, in this order (`COMPARE_KINDS=responses,embeddings` for the other endpoints' phases). */
const KINDS = {
  JSON: { body: jsonBody, path: undefined },
  stream: { body: streamBody, path: undefined },
  responses: { body: responsesStreamBody, path: '/v1/responses' },
  embeddings: { body: embeddingsBody, path: '/v1/embeddings' },
  messages: { body: messagesStreamBody, path: '/v1/messages' },
} as const;
type Kind = keyof typeof KINDS;
const kinds = (process.env.COMPARE_KINDS ?? 'JSON,stream').split(',') as Kind[];
for (const k of kinds) if (!(k in KINDS)) throw new Error(`COMPARE_KINDS: ${k} is not one of ${Object.keys(KINDS).join(', ')}`);
const request = (t: Running, kind: Kind) => endpoint(t.port, t.key, KINDS[kind].body, {}, KINDS[kind].path);

/** Per process, before the first window: V8 needs about 6 s of load to optimize a lone process's hot path. */
const WARMUP_MS = 6_000;

const log = (line: string) => process.stderr.write(`compare: ${line}\n`);

/** What V8's GC trace (`--trace-gc-nvp`) has reported so far: bytes allocated and promoted, and time paused. */
interface GcTotals {
  allocated: number;
  promoted: number;
  pauseMs: number;
}

interface Running {
  label: string;
  pid: number;
  port: number;
  key: string;
  gc: GcTotals;
  child: ChildProcess;
}

/** Starts a server with the GC trace on, pinned to core 0, and sums every GC line it prints. */
function startTraced(label: string, script: string, env: NodeJS.ProcessEnv, nodeArgs: string[]): Promise<Running> {
  const args = ['--expose-gc', '--trace-gc-nvp', ...nodeArgs, script];
  const [command, argv] = canPin ? ['taskset', ['-c', '0', process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(command, argv, { env: { ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  process.once('exit', () => child.kill('SIGKILL'));
  const gc: GcTotals = { allocated: 0, promoted: 0, pauseMs: 0 };
  let partial = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${label} exited (${code})`)));
    child.stdout?.on('data', (c: Buffer) => {
      const lines = (partial + c.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const allocated = / allocated=(\d+)/.exec(line);
        if (allocated) {
          gc.allocated += Number(allocated[1]);
          gc.promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
          gc.pauseMs += Number(/pause=([\d.]+)/.exec(line)?.[1] ?? 0);
        } else if (line.startsWith('{"ready":true')) {
          const ready = JSON.parse(line) as { port: number; key?: string };
          resolve({ label, pid: child.pid as number, port: ready.port, key: ready.key ?? NO_KEY, gc, child });
        }
      }
    });
  });
}

interface Sample {
  cpuUs: number;
  /** Mean time a request took, start to end (each connection sends its next when one ends): at 1 connection, the latency. */
  ms: number;
  allocatedKiB: number;
  promotedKiB: number;
  gcUs: number;
}

async function window(t: Running, e: Endpoint): Promise<Sample> {
  const cpu0 = cpuMs(t.pid);
  const gc0 = { ...t.gc };
  const r = await closedLoop(e, CONNECTIONS, WINDOW_MS);
  const n = r.completed;
  return {
    cpuUs: ((cpuMs(t.pid) - cpu0) * 1000) / n,
    ms: (r.elapsedMs * CONNECTIONS) / n,
    allocatedKiB: (t.gc.allocated - gc0.allocated) / 1024 / n,
    promotedKiB: (t.gc.promoted - gc0.promoted) / 1024 / n,
    gcUs: ((t.gc.pauseMs - gc0.pauseMs) * 1000) / n,
  };
}

/** `rev+--flag+--other`: the revision, and the node flags its server runs with. */
function withNodeArgs(arg: string): { revision: string; nodeArgs: string[] } {
  const [revision, ...nodeArgs] = arg.split('+');
  return { revision, nodeArgs };
}

const f = (s: Spread, digits: number) => `${s.median.toFixed(digits)} [${s.min.toFixed(digits)}–${s.max.toFixed(digits)}]`;

/** One row per build: medians over the windows (totals for the GC figures, which a window boundary splits). */
function table(kind: string, runs: Running[], samples: Sample[][]): string {
  const rows = runs.map((t, i) => {
    const ratio = spread(samples[i].map((s, round) => s.cpuUs / samples[0][round].cpuUs));
    const mean = (k: keyof Sample) => samples[i].reduce((a, s) => a + s[k], 0) / samples[i].length;
    return `| ${t.label} | ${f(spread(samples[i].map((s) => s.cpuUs)), 0)} | ${f(ratio, 3)}× | ${f(spread(samples[i].map((s) => s.ms)), 2)} | ${mean('allocatedKiB').toFixed(1)} | ${mean('promotedKiB').toFixed(2)} | ${mean('gcUs').toFixed(0)} |`;
  });
  return [
    `| ${kind}: build | CPU µs per request, median [least–most] | ÷ first build, same round | ms a request | KiB allocated | KiB promoted | GC pause µs |`,
    '|:--|--:|--:|--:|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const targets = process.argv.slice(2).map(withNodeArgs);
  if (targets.length === 0) throw new Error('usage: npm run bench:compare -- <revision|.|passthrough>[+node flag]…');
  const revisions = targets.map((t) => t.revision);
  if (canPin) pinSelf(1);
  compileServers();
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));
  const upstreamUrl = `http://127.0.0.1:${upstream.ready.port}`;
  const builds: (EarlierBuild | undefined)[] = revisions.map((r) =>
    r === 'passthrough' ? undefined : r === '.' ? buildWorkingTree() : buildEarlier(r),
  );
  const runs: Running[] = [];
  for (const [i, build] of builds.entries()) {
    const env = build
      ? { ...process.env, ...TOKENMETER_ENV, UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: `redis://127.0.0.1:${redisPort}/${i}` }
      : { ...process.env, UPSTREAM_ORIGIN: upstreamUrl };
    const script = build ? build.server : (serverProcess('', 'passthrough-server', {}).args.at(-1) as string);
    const { nodeArgs } = targets[i];
    const label = `${build?.label ?? 'passthrough'}${nodeArgs.length ? ` ${nodeArgs.join(' ')}` : ''}`;
    runs.push(await startTraced(label, script, env, nodeArgs));
  }
  for (const t of runs) for (const kind of kinds) await closedLoop(request(t, kind), CONNECTIONS, WARMUP_MS / kinds.length);
  const results = Object.fromEntries(kinds.map((k) => [k, runs.map((): Sample[] => [])])) as Record<Kind, Sample[][]>;
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of kinds) {
      for (let k = 0; k < runs.length; k++) {
        const i = (k + round) % runs.length;
        results[kind][i][round] = await window(runs[i], request(runs[i], kind));
      }
    }
    const first = results[kinds[0]];
    log(`round ${round + 1} of ${ROUNDS}: ${kinds[0]} ${first.map((s) => s[round].cpuUs.toFixed(0)).join(' / ')} µs`);
  }
  for (const t of runs) t.child.kill('SIGKILL');
  await upstream.stop();
  await redis.stop();
  for (const b of builds) b?.cleanup();
  process.stdout.write(
    `\n${ROUNDS} rounds of ${WINDOW_MS} ms windows at ${CONNECTIONS} connections\n\n` +
      `${kinds.map((k) => table(k, runs, results[k])).join('\n\n')}\n`,
  );
}

killAllOnExit(log);
main().catch((err: Error) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
