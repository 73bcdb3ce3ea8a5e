/** `npm run bench`: measures every target in turn as its own pinned process under the same load, then prints and saves the table. */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/redis-server';
import { appendHistory } from './history';
import { git, machine, versions } from './machine';
import { buildEarlier, earlierProcess, type EarlierBuild } from './earlier-build';
import { jsonThroughputSplit, measure, type Figures, type TargetUnderTest, type Window } from './measure';
import { nginxTarget, nginxVersion } from './nginx';
import { canPin, killAllOnExit, pinSelf, startProcess, type StartOptions, type Started } from './processes';
import {
  BASELINE,
  groupTable,
  spread,
  spreadTable,
  summarize,
  table,
  verdicts,
  writeReport,
  type GroupResult,
  type TargetResult,
} from './report';
import { compileServers, redisProcess, serverProcess } from './servers';
import { addedTable, waitsTable } from './tail-report';
import { NO_KEY, settings } from './workload';
import { webhookLine, webhookThroughput } from './webhook-phase';

const RESULTS = join(__dirname, 'results');
const TARGET_CORE = 0;
const LOAD_CORE = 1;
/** Other processes' CPU (% of a core) above which a target's req/s and latency figures are flagged as noisy. */
const NOISY_PCT = 20;

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

interface Target {
  name: string;
  label: string;
  /** How to start it, or why it cannot run here. */
  start: () => Promise<{ options: StartOptions; cleanup?: () => void } | string>;
  /** A node server of ours, which collects its garbage on SIGUSR2 (see gc-on-signal.ts). */
  node: boolean;
  /** Measured in every round (the targets compared); otherwise in the first round only (context). */
  compared: boolean;
  /** Has a usage.settled webhook endpoint (the mock upstream's /webhook): its delivery throughput is measured too. */
  webhook?: boolean;
}

/** Starts a target's process, runs `phase` against it, and stops it whatever happens. */
async function withTarget<T>(
  target: Pick<Target, 'label' | 'start'>,
  core: number | string | undefined,
  phase: (t: TargetUnderTest) => Promise<T>,
): Promise<T | string> {
  const plan = await target.start();
  if (typeof plan === 'string') return plan;
  let started: Started | undefined;
  try {
    try {
      started = await startProcess({ ...plan.options, core });
    } catch (err) {
      // A target that cannot start here is skipped, not the whole run.
      return `cannot start: ${(err as Error).message.split('\n')[0].slice(0, 300)}`;
    }
    const port = Number(started.ready.port ?? plan.options.port);
    const key = typeof started.ready.key === 'string' ? started.ready.key : NO_KEY;
    log(`${target.label}: pid ${started.pid}, port ${port}`);
    const pid = started.pid;
    const statsPort = typeof started.ready.statsPort === 'number' ? started.ready.statsPort : undefined;
    return await phase({ pid, port, key, statsPort, collectGarbage: () => process.kill(pid, 'SIGUSR2') });
  } finally {
    await started?.stop();
    plan.cleanup?.();
  }
}

async function runTarget(target: Target, pin: boolean, receiverUrl: string, notes: string[]): Promise<Figures | string> {
  return withTarget(target, pin ? TARGET_CORE : undefined, async (t) => {
    const figures = await measure({ ...t, collectGarbage: target.node ? t.collectGarbage : undefined }, (line) =>
      log(`${target.label}: ${line}`),
    );
    if (target.webhook) {
      const line = webhookLine(target.label, await webhookThroughput(t.port, t.key, receiverUrl));
      log(line);
      notes.push(line);
    }
    return figures;
  });
}

/** A worker-group configuration of tokenmeter on Redis, measured for JSON max req/s only. */
interface Group {
  label: string;
  workers: number;
  /** taskset's core list for the whole group (primary and workers). */
  cores: string | undefined;
  /** `workers` separate single processes instead of one cluster: what sharing the cores costs, cluster or not. */
  separate?: boolean;
}

/** Starts `count` processes of one plan, runs `phase` against them all, and stops them whatever happens. */
async function withProcesses<T>(
  label: string,
  options: StartOptions,
  count: number,
  core: string | undefined,
  phase: (targets: TargetUnderTest[]) => Promise<T>,
): Promise<T> {
  const started: Started[] = [];
  try {
    for (let i = 0; i < count; i++) started.push(await startProcess({ ...options, name: `${label} #${i + 1}`, core }));
    return await phase(
      started.map((p) => ({ pid: p.pid, port: Number(p.ready.port), key: typeof p.ready.key === 'string' ? p.ready.key : NO_KEY })),
    );
  } finally {
    for (const p of started) await p.stop();
  }
}

/** tokenmeter on Redis as built at an earlier revision (BENCH_EARLIER), on a Redis database of its own (its layout may differ). */
function earlierTarget(build: EarlierBuild, upstreamUrl: string, redisUrl: string): Target {
  const label = `tokenmeter (Redis) at ${build.label}`;
  const options = earlierProcess(build, label, upstreamUrl, redisUrl);
  return { name: 'tokenmeter-redis-earlier', label, node: true, compared: true, start: async () => ({ options }) };
}

async function main(): Promise<void> {
  const began = Date.now();
  const notes: string[] = settings.smoke ? ['BENCH_SMOKE=1: every phase shortened to check the harness; the figures mean nothing'] : [];
  const pin = canPin && cpus().length >= 2;
  if (pin) {
    pinSelf(LOAD_CORE);
    notes.push(
      `pinned with taskset: each target on core ${TARGET_CORE}; load generator, mock upstream and redis-server on core ${LOAD_CORE}`,
    );
  } else {
    notes.push('not pinned (taskset missing or fewer than 2 cores): every process shares every core; expect more noise');
  }

  log('compiling the server processes (tsc)');
  compileServers();

  // Shared by every proxy target; they inherit this process's core.
  const upstream = await startProcess(serverProcess('mock upstream', 'mock-upstream', {}));
  const upstreamPort = Number(upstream.ready.port);
  // Two more, only for the three-server pool target (idle otherwise).
  const replicas = [
    await startProcess(serverProcess('mock upstream 2', 'mock-upstream', {})),
    await startProcess(serverProcess('mock upstream 3', 'mock-upstream', {})),
  ];
  const replicaUrls = replicas.map((r) => `http://127.0.0.1:${Number(r.ready.port)}/v1`);
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const nginx = nginxVersion();
  const tokenmeter = (label: string, env: Record<string, string>) => async () => ({
    options: serverProcess(label, 'tokenmeter-server', { UPSTREAM_URL: `${upstreamUrl}/v1`, ...env }),
  });
  let earlier: EarlierBuild | undefined;
  if (process.env.BENCH_EARLIER) {
    log(`building the earlier revision, ${process.env.BENCH_EARLIER}, in a temporary worktree`);
    earlier = buildEarlier(process.env.BENCH_EARLIER);
  }

  const targets: Target[] = [
    {
      name: 'upstream',
      label: 'upstream (direct)',
      node: true,
      compared: false,
      start: async () => ({ options: serverProcess('upstream', 'mock-upstream', {}) }),
    },
    {
      name: 'passthrough',
      label: 'passthrough',
      node: true,
      compared: true,
      start: async () => ({ options: serverProcess('passthrough', 'passthrough-server', { UPSTREAM_ORIGIN: upstreamUrl }) }),
    },
    {
      name: 'tokenmeter-memory',
      label: 'tokenmeter (memory)',
      node: true,
      compared: false,
      start: tokenmeter('tokenmeter (memory)', { REDIS_URL: '' }),
    },
    {
      name: 'tokenmeter-redis',
      label: 'tokenmeter (Redis)',
      node: true,
      compared: true,
      start: tokenmeter('tokenmeter (Redis)', { REDIS_URL: redisUrl }),
    },
    {
      // The same, on a key with limits high enough never to refuse: the cost of checking and counting them, beside
      // the row above (a key without limits), in the same round.
      name: 'tokenmeter-redis-limited',
      label: 'tokenmeter (Redis, limited key)',
      node: true,
      compared: true,
      start: tokenmeter('tokenmeter (Redis, limited key)', {
        REDIS_URL: redisUrl,
        BENCH_KEY_LIMITS: JSON.stringify({ rpm: 1_000_000_000, tpm: 1_000_000_000, max_concurrent: 1_000_000 }),
      }),
    },
    {
      // The same with a webhook endpoint that wants usage.settled, an event per request: what the outbox costs.
      name: 'tokenmeter-redis-webhooks',
      label: 'tokenmeter (Redis, usage.settled webhook)',
      node: true,
      compared: true,
      start: tokenmeter('tokenmeter (Redis, usage.settled webhook)', {
        REDIS_URL: redisUrl,
        // Keys of its own: the endpoint must not reach the other targets, which share the redis-server.
        REDIS_PREFIX: 'tmw:',
        BENCH_WEBHOOK_URL: `${upstreamUrl}/webhook`,
      }),
      webhook: true,
    },
    {
      // The same endpoint taking CloudEvents batches of up to 100 events per POST.
      name: 'tokenmeter-redis-webhooks-batched',
      label: 'tokenmeter (Redis, usage.settled webhook, batches of 100)',
      node: true,
      compared: true,
      start: tokenmeter('tokenmeter (Redis, usage.settled webhook, batches of 100)', {
        REDIS_URL: redisUrl,
        REDIS_PREFIX: 'tmwb:',
        BENCH_WEBHOOK_URL: `${upstreamUrl}/webhook`,
        BENCH_WEBHOOK_BATCH: '100',
      }),
      webhook: true,
    },
    {
      // The same models served by an upstream pool of one server: what the pool costs where there is nothing to choose.
      name: 'tokenmeter-redis-pool1',
      label: 'tokenmeter (Redis, pool of 1)',
      node: true,
      compared: true,
      start: tokenmeter('tokenmeter (Redis, pool of 1)', { REDIS_URL: redisUrl, BENCH_POOL: `${upstreamUrl}/v1` }),
    },
    {
      // A pool of three servers (three mock upstreams): what choosing among them costs per request.
      name: 'tokenmeter-redis-pool3',
      label: 'tokenmeter (Redis, pool of 3)',
      node: true,
      compared: true,
      start: tokenmeter('tokenmeter (Redis, pool of 3)', {
        REDIS_URL: redisUrl,
        BENCH_POOL: [`${upstreamUrl}/v1`, ...replicaUrls].join(','),
      }),
    },
    ...(earlier ? [earlierTarget(earlier, upstreamUrl, redisUrl)] : []),
    {
      name: 'nginx',
      label: 'nginx',
      node: false,
      compared: false,
      start: async () => (nginx ? nginxTarget(await freePort(), upstreamPort) : 'nginx is not installed'),
    },
  ];
  // The load generator has core 1 to itself only while every group stays on core 0; `0,1` shares it with the group.
  const groups: Group[] = pin
    ? [
        { label: 'WORKERS=1, core 0', workers: 1, cores: String(TARGET_CORE) },
        { label: 'WORKERS=2, core 0', workers: 2, cores: String(TARGET_CORE) },
        { label: '2 processes without cluster, core 0', workers: 2, cores: String(TARGET_CORE), separate: true },
        { label: 'WORKERS=2, cores 0-1 (shared with the load)', workers: 2, cores: `${TARGET_CORE},${LOAD_CORE}` },
      ]
    : [
        { label: 'WORKERS=1', workers: 1, cores: undefined },
        { label: 'WORKERS=2', workers: 2, cores: undefined },
      ];

  const figures = new Map<string, (Figures | undefined)[]>(targets.map((t) => [t.name, []]));
  const skipped = new Map<string, string>();
  const groupWindows = new Map<string, Window[]>(groups.map((g) => [g.label, []]));
  for (let round = 0; round < settings.rounds; round++) {
    // Alternate the order, so no target always runs right after the same other one.
    const order = targets.filter((t) => round === 0 || t.compared);
    if (round % 2 === 1) order.reverse();
    log(`round ${round + 1} of ${settings.rounds}: ${order.map((t) => t.label).join(', ')}, then the worker groups`);
    for (const target of order) {
      const result = await runTarget(target, pin, upstreamUrl, notes);
      if (typeof result === 'string') {
        log(`${target.label}: skipped (${result})`);
        skipped.set(target.name, result);
      }
      (figures.get(target.name) as (Figures | undefined)[])[round] = typeof result === 'string' ? undefined : result;
    }
    for (const group of round % 2 === 1 ? [...groups].reverse() : groups) {
      const env = { UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: redisUrl, WORKERS: String(group.separate ? 1 : group.workers) };
      const options = serverProcess(group.label, 'tokenmeter-server', env);
      // V8 optimizes each process's hot path on its own, and processes sharing a core share its time: each needs about
      // two warm-ups of a lone process's CPU before its figures settle (fewer, and the window measures the JIT).
      const warmupMs = settings.warmupMs * 2 * group.workers;
      const count = group.separate ? group.workers : 1;
      const w = await withProcesses(group.label, options, count, group.cores, (t) => jsonThroughputSplit(t, warmupMs));
      log(`${group.label}: ${w.rps.toFixed(0)} req/s, ${w.cpuUs.toFixed(0)} µs CPU/request, ${w.busyPct.toFixed(0)} % of a core`);
      (groupWindows.get(group.label) as Window[])[round] = w;
    }
  }
  await upstream.stop();
  for (const r of replicas) await r.stop();
  await redis.stop();
  earlier?.cleanup();

  const baseRounds = figures.get(BASELINE) as (Figures | undefined)[];
  const results: TargetResult[] = targets.map((t) => {
    const rounds = (figures.get(t.name) as (Figures | undefined)[]).filter((f): f is Figures => f !== undefined);
    const base = { name: t.name, label: t.label };
    if (rounds.length === 0) return { ...base, skipped: skipped.get(t.name) ?? 'not measured' };
    const bases = (figures.get(t.name) as (Figures | undefined)[]).flatMap((f, i) => (f ? [baseRounds[i]] : []));
    return summarize(base, rounds, bases);
  });
  const single = groupWindows.get(groups[0].label) as Window[];
  const groupResults: GroupResult[] = groups.map((g) => {
    const windows = groupWindows.get(g.label) as Window[];
    return {
      label: g.label,
      rps: spread(windows.map((w) => w.rps)),
      cpuUs: spread(windows.map((w) => w.cpuUs)),
      busyPct: spread(windows.map((w) => w.busyPct)),
      ratio: spread(windows.map((w, i) => w.rps / single[i].rps)),
    };
  });

  log('Redis per request: bench/redis-bytes.ts');
  notes.push(...redisPerRequest(settings.smoke));
  for (const r of results) if (r.skipped) notes.push(`${r.label} skipped: ${r.skipped}`);
  const failed = results.reduce((n, r) => n + (r.rounds ?? []).reduce((m, f) => m + f.failed, 0), 0);
  if (failed > 0) notes.push(`${failed} requests failed during the run: the figures of targets with failures are suspect`);
  const noisy = results.filter((r) => (r.figures?.othersPct ?? 0) > NOISY_PCT).map((r) => r.label);
  if (noisy.length > 0) {
    notes.push(
      `other processes used more than ${NOISY_PCT} % of a core while ${noisy.join(', ')} ran: req/s and latency are noisy; ` +
        'CPU and syscalls per request hold up best',
    );
  }
  const report = {
    generatedAt: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - began) / 1000),
    machine: machine(),
    versions: versions(nginx),
    settings,
    notes,
    targets: results,
    groups: groupResults,
    verdicts: verdicts(results),
  };
  const name = settings.smoke ? 'smoke' : 'latest';
  const tail = [addedTable(report.targets), waitsTable(report.targets)];
  writeReport(RESULTS, report, name, tail);
  if (!settings.smoke && appendHistory(join(RESULTS, 'history.csv'), { ...report, commit: git() }))
    log('appended its medians to bench/results/history.csv');
  process.stdout.write(
    `\n${table(report.targets, report.verdicts)}\n\n${spreadTable(report.targets)}\n\n${tail.join('\n\n')}\n\n${groupTable(report.groups)}\n\n`,
  );
  log(`done in ${report.durationSeconds} s; wrote bench/results/${name}.md and ${name}.json`);
}

/**
 * What a request costs Redis (bytes kept, commands, the scripts' own time), from bench/redis-bytes.ts run on a
 * redis-server of its own: RESERVE and SETTLE as the proxy sends them, then SETTLE alone as a retry sends it.
 */
function redisPerRequest(smoke: boolean): string[] {
  const lines: string[] = [];
  for (const settleOnly of ['0', '1']) {
    const out = execFileSync('npx', ['tsx', join(__dirname, 'redis-bytes.ts'), smoke ? '2000' : '20000'], {
      encoding: 'utf8',
      env: { ...process.env, SETTLE_ONLY: settleOnly },
    });
    const mode = settleOnly === '1' ? 'SETTLE alone' : 'RESERVE and SETTLE';
    for (const line of out.split('\n'))
      if (/bytes per request|scripts in Redis|commands per request/.test(line))
        lines.push(`Redis, ${mode} (bench/redis-bytes.ts): ${line}`);
  }
  return lines;
}

killAllOnExit(log);
main().catch((err: Error) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
