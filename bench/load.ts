/**
 * The benchmark's load generator, on node:http: closed-loop runs for max req/s, open-loop fixed-rate runs for latency
 * and time to first body byte, and many held-open paced streams.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Endpoint {
  port: number;
  /** Request headers, content-length included. */
  headers: Record<string, string>;
  body: Buffer;
  /** The path posted to. Default `/v1/chat/completions`. */
  path?: string;
}

export interface Sample {
  /** When it was sent, in ms since the epoch (`performance.timeOrigin + now()`: comparable with the target's clock). */
  startedAt: number;
  /** 200 with a body. */
  ok: boolean;
  /** Time to the first body byte. */
  ttfbMs: number;
  totalMs: number;
}

const PATH = '/v1/chat/completions';
/** No request of the benchmark takes this long; one that does has hung and counts as failed. */
const REQUEST_TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request; resolves when its response ended or it failed. `onFirstByte` runs once, at the first body byte. */
function send(endpoint: Endpoint, agent: Agent, onFirstByte?: () => void): Promise<Sample> {
  const start = performance.now();
  const startedAt = performance.timeOrigin + start;
  return new Promise((resolve) => {
    const failed = () => resolve({ startedAt, ok: false, ttfbMs: -1, totalMs: performance.now() - start });
    const req = request(
      { host: '127.0.0.1', port: endpoint.port, method: 'POST', path: endpoint.path ?? PATH, headers: endpoint.headers, agent },
      (res) => {
        let ttfbMs = -1;
        res.on('data', () => {
          if (ttfbMs >= 0) return;
          ttfbMs = performance.now() - start;
          onFirstByte?.();
        });
        res.once('end', () =>
          resolve({ startedAt, ok: res.statusCode === 200 && ttfbMs >= 0, ttfbMs, totalMs: performance.now() - start }),
        );
        res.once('error', failed);
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy());
    req.once('error', failed);
    req.end(endpoint.body);
  });
}

export interface ClosedLoopResult {
  completed: number;
  failed: number;
  elapsedMs: number;
}

/** `connections` loops each sending its next request as soon as the last one ended, for `durationMs`. */
export async function closedLoop(endpoint: Endpoint, connections: number, durationMs: number): Promise<ClosedLoopResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let completed = 0;
  let failed = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const loop = async () => {
    while (performance.now() < deadline) {
      if ((await send(endpoint, agent)).ok) completed++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsedMs = performance.now() - start;
  agent.destroy();
  return { completed, failed, elapsedMs };
}

export interface OpenLoopResult {
  /** The recorded requests (after the lead-in). */
  samples: Sample[];
  /** Every request sent, the lead-in's included. */
  sent: number;
}

/**
 * Sends `rate` requests a second on schedule, whether or not earlier ones have answered (no coordinated omission),
 * for `leadInMs` unrecorded (to open the connections) and then `durationMs` recorded.
 */
export async function openLoop(endpoint: Endpoint, rate: number, durationMs: number, leadInMs = 500): Promise<OpenLoopResult> {
  const agent = new Agent({ keepAlive: true });
  const interval = 1000 / rate;
  const total = Math.round(((leadInMs + durationMs) * rate) / 1000);
  const skip = Math.round((leadInMs * rate) / 1000);
  const start = performance.now();
  const recorded: Promise<Sample>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + i * interval - performance.now();
    if (wait >= 1) await sleep(wait);
    const sample = send(endpoint, agent);
    if (i >= skip) recorded.push(sample);
  }
  const samples = await Promise.all(recorded);
  agent.destroy();
  return { samples, sent: total };
}

export interface HeldResult<T> {
  /** What `whileOpen` returned. */
  during: T;
  /** Streams that had their first body byte when `whileOpen` ran. */
  open: number;
  completed: number;
  failed: number;
}

/**
 * Opens `count` streams (in small batches, so no listen backlog overflows), calls `whileOpen` once every one of them
 * has begun, then waits for all of them to end. The endpoint must make the upstream pace its events.
 */
export async function holdStreams<T>(endpoint: Endpoint, count: number, whileOpen: () => Promise<T>): Promise<HeldResult<T>> {
  const BATCH = 50;
  const OPEN_TIMEOUT_MS = 15_000;
  const agent = new Agent({ keepAlive: true });
  let open = 0;
  let settled = 0;
  let allBegun: () => void = () => {};
  const begun = new Promise<void>((resolve) => (allBegun = resolve));
  const progress = (kind: 'open' | 'settled') => {
    if (kind === 'open') open++;
    else settled++;
    if (open + settled >= count) allBegun();
  };
  const streams: Promise<Sample>[] = [];
  for (let i = 0; i < count; i += BATCH) {
    for (let j = i; j < Math.min(count, i + BATCH); j++) {
      let begunHere = false;
      const s = send(endpoint, agent, () => {
        begunHere = true;
        progress('open');
      });
      // A stream that ended (or failed) without a first byte still counts towards "every one has begun".
      streams.push(
        s.then((sample) => {
          if (!begunHere) progress('settled');
          return sample;
        }),
      );
    }
    await sleep(10);
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([begun, new Promise((resolve) => (timer = setTimeout(resolve, OPEN_TIMEOUT_MS)))]);
  clearTimeout(timer);
  const openNow = open;
  const during = await whileOpen();
  const samples = await Promise.all(streams);
  agent.destroy();
  const completed = samples.filter((s) => s.ok).length;
  return { during, open: openNow, completed, failed: samples.length - completed };
}

/** The p-th percentile (0..100) of a list of numbers, by nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
