/** `npm run bench`: measures every target in turn as its own pinned process under the same load, then prints and saves the table. */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/redis-server';
import { machine, versions } from './machine';
import { measure } from './measure';
import { nginxTarget, nginxVersion } from './nginx';
import { canPin, killAllOnExit, pinSelf, startProcess, type StartOptions, type Started } from './processes';
import { table, verdicts, writeReport, type TargetResult } from './report';
import { compileServers, redisProcess, serverProcess } from './servers';
import { NO_KEY, settings } from './workload';

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
}

async function runTarget(target: Target, pin: boolean): Promise<TargetResult> {
  const plan = await target.start();
  if (typeof plan === 'string') {
    log(`${target.label}: skipped (${plan})`);
    return { name: target.name, label: target.label, skipped: plan };
  }
  let started: Started | undefined;
  try {
    started = await startProcess({ ...plan.options, core: pin ? TARGET_CORE : undefined });
    const port = Number(started.ready.port ?? plan.options.port);
    const key = typeof started.ready.key === 'string' ? started.ready.key : NO_KEY;
    log(`${target.label}: pid ${started.pid}, port ${port}`);
    const pid = started.pid;
    const collectGarbage = target.node ? () => process.kill(pid, 'SIGUSR2') : undefined;
    const figures = await measure({ pid, port, key, collectGarbage }, (line) => log(`${target.label}: ${line}`));
    return { name: target.name, label: target.label, figures };
  } finally {
    await started?.stop();
    plan.cleanup?.();
  }
}

async function main(): Promise<void> {
  const began = Date.now();
  const notes: string[] = [];
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
  const redisPort = await freePort();
  const redis = await startProcess(redisProcess(redisPort));
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
  const nginx = nginxVersion();

  const targets: Target[] = [
    {
      name: 'upstream',
      label: 'upstream (direct)',
      node: true,
      start: async () => ({ options: serverProcess('upstream', 'mock-upstream', {}) }),
    },
    {
      name: 'passthrough',
      label: 'passthrough',
      node: true,
      start: async () => ({ options: serverProcess('passthrough', 'passthrough-server', { UPSTREAM_ORIGIN: upstreamUrl }) }),
    },
    {
      name: 'tokenmeter-memory',
      label: 'tokenmeter (memory)',
      node: true,
      start: async () => ({
        options: serverProcess('tokenmeter (memory)', 'tokenmeter-server', { UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: '' }),
      }),
    },
    {
      name: 'tokenmeter-redis',
      label: 'tokenmeter (Redis)',
      node: true,
      start: async () => ({
        options: serverProcess('tokenmeter (Redis)', 'tokenmeter-server', {
          UPSTREAM_URL: `${upstreamUrl}/v1`,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        }),
      }),
    },
    {
      // The same, on a key with limits high enough never to refuse: the cost of checking and counting them, beside
      // the row above (a key without limits), in the same run.
      name: 'tokenmeter-redis-limited',
      label: 'tokenmeter (Redis, limited key)',
      node: true,
      start: async () => ({
        options: serverProcess('tokenmeter (Redis, limited key)', 'tokenmeter-server', {
          UPSTREAM_URL: `${upstreamUrl}/v1`,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          BENCH_KEY_LIMITS: JSON.stringify({ rpm: 1_000_000_000, tpm: 1_000_000_000, max_concurrent: 1_000_000 }),
        }),
      }),
    },
    {
      name: 'nginx',
      label: 'nginx',
      node: false,
      start: async () => (nginx ? nginxTarget(await freePort(), upstreamPort) : 'nginx is not installed'),
    },
  ];

  const results: TargetResult[] = [];
  for (const target of targets) results.push(await runTarget(target, pin));
  await upstream.stop();
  await redis.stop();

  for (const r of results) if (r.skipped) notes.push(`${r.label} skipped: ${r.skipped}`);
  const failed = results.reduce((n, r) => n + (r.figures?.failed ?? 0), 0);
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
    verdicts: verdicts(results),
  };
  writeReport(RESULTS, report);
  process.stdout.write(`\n${table(report.targets, report.verdicts)}\n\n`);
  log(`done in ${report.durationSeconds} s; wrote bench/results/latest.md and latest.json`);
}

killAllOnExit(log);
main().catch((err: Error) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
