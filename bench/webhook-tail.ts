/**
 * `npx tsx bench/webhook-tail.ts`: what a usage.settled webhook endpoint (one POST per event, the costliest) adds to
 * the JSON time to first byte at a fixed rate, with the delivery in a thread of its own (WEBHOOK_DELIVERY_THREAD, the
 * default on Redis) and in the request path's event loop (false), beside tokenmeter without an endpoint and the
 * passthrough. Pinned as `npm run bench` pins: each target on core 0, alone while measured; the load, the mock
 * upstream (which is the receiver too) and redis-server on core 1. WEBHOOK_TAIL_ROUNDS (default 3) interleaved rounds
 * of WEBHOOK_TAIL_SECONDS (default 10) at WEBHOOK_TAIL_RATE requests a second (default 300); medians, and each
 * round's difference to the passthrough's.
 */
import { freePort } from '../test/helpers/redis-server';
import { openLoop, percentile } from './load';
import { killAllOnExit, pinSelf, startProcess, type Started } from './processes';
import { compileServers, redisProcess, serverProcess } from './servers';
import { quiet, stats } from './webhook-phase';
import { endpoint, jsonBody, NO_KEY } from './workload';

const ROUNDS = Number(process.env.WEBHOOK_TAIL_ROUNDS ?? 3);
const SECONDS = Number(process.env.WEBHOOK_TAIL_SECONDS ?? 10);
const RATE = Number(process.env.WEBHOOK_TAIL_RATE ?? 300);
/** Unrecorded requests first, to open the connections (their events are delivered too). */
const LEAD_IN_MS = 2_000;
const TARGET_CORE = 0;
const LOAD_CORE = 1;

const log = (line: string) => process.stderr.write(`webhook-tail: ${line}\n`);
const median = (xs: number[]) => percentile(xs, 50);

async function main(): Promise<void> {
  killAllOnExit(log);
  compileServers();
  pinSelf(LOAD_CORE);
  const upstream = await startProcess({ ...serverProcess('mock upstream', 'mock-upstream', {}), core: LOAD_CORE });
  const upstreamUrl = `http://127.0.0.1:${Number(upstream.ready.port)}`;
  const receiverUrl = upstreamUrl;
  const redisPort = await freePort();
  await startProcess({ ...redisProcess(redisPort), core: LOAD_CORE });
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const tokenmeter = (label: string, env: Record<string, string>) =>
    startProcess({
      ...serverProcess(label, 'tokenmeter-server', { UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: redisUrl, ...env }),
      core: TARGET_CORE,
    });
  const targets: { label: string; started: Started }[] = [
    {
      label: 'passthrough',
      started: await startProcess({
        ...serverProcess('passthrough', 'passthrough-server', { UPSTREAM_ORIGIN: upstreamUrl }),
        core: TARGET_CORE,
      }),
    },
    { label: 'tokenmeter, no endpoint', started: await tokenmeter('tokenmeter', { REDIS_PREFIX: 'tmn:' }) },
    {
      label: 'usage.settled, delivery thread',
      started: await tokenmeter('thread', { REDIS_PREFIX: 'tmt:', BENCH_WEBHOOK_URL: `${upstreamUrl}/webhook` }),
    },
    {
      label: 'usage.settled, event loop',
      started: await tokenmeter('inline', {
        REDIS_PREFIX: 'tmi:',
        BENCH_WEBHOOK_URL: `${upstreamUrl}/webhook`,
        WEBHOOK_DELIVERY_THREAD: 'false',
      }),
    },
  ];
  const figures = new Map<string, { p50: number[]; p99: number[] }>(targets.map((t) => [t.label, { p50: [], p99: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const ready = t.started.ready as { port: number; key?: string };
      const e = endpoint(ready.port, ready.key ?? NO_KEY, jsonBody);
      const before = t.label.startsWith('usage.settled') ? (await stats(receiverUrl)).events : 0;
      const { samples } = await openLoop(e, RATE, SECONDS * 1000, LEAD_IN_MS);
      const ttfb = samples.filter((s) => s.ok).map((s) => s.ttfbMs);
      const f = figures.get(t.label)!;
      f.p50.push(percentile(ttfb, 50));
      f.p99.push(percentile(ttfb, 99));
      log(
        `round ${round + 1}, ${t.label}: p50 ${f.p50.at(-1)!.toFixed(2)} ms, p99 ${f.p99.at(-1)!.toFixed(2)} ms (${ttfb.length} of ${samples.length} ok)`,
      );
      // Every event of this phase is delivered before the next target is measured: the thread shares core 0 too.
      await quiet(receiverUrl, 1_000, 120_000);
      if (t.label.startsWith('usage.settled')) {
        const delivered = (await stats(receiverUrl)).events - before;
        log(`  ${delivered} events delivered (${samples.length + Math.round((LEAD_IN_MS / 1000) * RATE)} requests sent)`);
        if (delivered < samples.length)
          throw new Error(`${t.label}: only ${delivered} events of ${samples.length} requests were delivered`);
      }
    }
  }
  const base = figures.get('passthrough')!;
  const added = (xs: number[], ys: number[]) => xs.map((x, i) => x - ys[i]);
  const range = (xs: number[]) => `${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`;
  process.stdout.write(
    `\n| JSON at ${RATE}/s, ${ROUNDS} rounds of ${SECONDS} s | TTFB p50 | TTFB p99 | added p50 | added p99 |\n|---|--:|--:|--:|--:|\n`,
  );
  for (const [label, f] of figures)
    process.stdout.write(
      `| ${label} | ${median(f.p50).toFixed(2)} ms | ${median(f.p99).toFixed(2)} ms | ${label === 'passthrough' ? '' : `${range(added(f.p50, base.p50))} ms`} | ${label === 'passthrough' ? '' : `${range(added(f.p99, base.p99))} ms`} |\n`,
    );
  process.exit(0);
}

void main();
