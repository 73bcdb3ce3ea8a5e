/**
 * What the slow requests of a fixed-rate phase waited on: the target's event-loop delay and GC pauses over the window
 * (from its side port, see loop-stats.ts) and how many of the slowest requests had a GC pause inside them.
 */
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentile, type Sample } from './load';
import type { LoopStats } from './loop-stats';

export interface Waits {
  /** Event-loop delay over the window (how late a 10 ms timer fired), p99 and max, in ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** GC pauses: their sum as a share of the window, and the longest one (ms). */
  gcPct: number;
  gcMaxMs: number;
  /** Of the requests at or above the phase's p99 time to first byte, the share that had a GC pause inside them. */
  slowWithGcPct: number;
}

/** For a target that serves no figures (nginx, the mock, an earlier build): every figure n/a. */
export const NO_WAITS: Waits = { loopDelayP99Ms: NaN, loopDelayMaxMs: NaN, gcPct: NaN, gcMaxMs: NaN, slowWithGcPct: NaN };

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.once('end', () => resolve(body));
    })
      .once('error', reject)
      .end();
  });
}

/** Opens the target's window (when it has a side port); returns when it began. */
export async function openWindow(statsPort: number | undefined): Promise<number> {
  if (statsPort !== undefined) await get(statsPort, '/start');
  return performance.timeOrigin + performance.now();
}

/** Closes the window and reads what the samples sent in it waited on. */
export async function closeWindow(statsPort: number | undefined, began: number, samples: Sample[]): Promise<Waits> {
  if (statsPort === undefined) return NO_WAITS;
  const stats = JSON.parse(await get(statsPort, '/stop')) as LoopStats;
  const windowMs = performance.timeOrigin + performance.now() - began;
  const ok = samples.filter((s) => s.ok);
  const p99 = percentile(
    ok.map((s) => s.ttfbMs),
    99,
  );
  const slow = ok.filter((s) => s.ttfbMs >= p99);
  const paused = slow.filter((s) => stats.gc.some((p) => p.at < s.startedAt + s.ttfbMs && p.at + p.ms > s.startedAt));
  return {
    loopDelayP99Ms: stats.delay.p99,
    loopDelayMaxMs: stats.delay.max,
    gcPct: (100 * stats.gc.reduce((sum, p) => sum + p.ms, 0)) / windowMs,
    gcMaxMs: stats.gc.reduce((max, p) => Math.max(max, p.ms), 0),
    slowWithGcPct: slow.length === 0 ? NaN : (100 * paused.length) / slow.length,
  };
}
