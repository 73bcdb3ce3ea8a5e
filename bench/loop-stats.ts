/**
 * Imported by the bench's node servers: what the process's event loop waited on during a measured window, served on a
 * side port of its own (bench only, loopback): `GET /start` opens a window, `GET /stop` closes it and answers its
 * event-loop delay (perf_hooks.monitorEventLoopDelay) and every GC pause in it, with when it began. Nothing is
 * sampled or observed outside a window, so the other phases' CPU figures do not pay for it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** How often the delay monitor's timer fires; what it records is that interval plus the delay. */
const RESOLUTION_MS = 10;

export interface GcPause {
  /** When it began, in ms since the epoch (comparable across processes: `performance.timeOrigin + now()`). */
  at: number;
  ms: number;
  kind: 'minor' | 'major' | 'incremental' | 'weak callbacks';
}

export interface LoopStats {
  /** Event-loop delay over the window, in ms: how late a 10 ms timer fired. */
  delay: { p50: number; p99: number; max: number };
  gc: GcPause[];
}

const KINDS: Record<number, GcPause['kind']> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak callbacks' };

/** Starts the side server; resolves to its port. */
export function serveLoopStats(): Promise<number> {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  let pauses: GcPause[] = [];
  const record = (entries: PerformanceEntry[]) => {
    for (const e of entries) {
      const kind = KINDS[(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'minor';
      pauses.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind });
    }
  };
  const observer = new PerformanceObserver((list) => record(list.getEntries()));
  const delay = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
  const server = createServer((req, res) => {
    if (req.url === '/start') {
      pauses = [];
      histogram.reset();
      histogram.enable();
      observer.observe({ entryTypes: ['gc'] });
      res.end('{}');
    } else if (req.url === '/stop') {
      histogram.disable();
      record(observer.takeRecords());
      observer.disconnect();
      const stats: LoopStats = {
        delay: { p50: delay(histogram.percentile(50)), p99: delay(histogram.percentile(99)), max: delay(histogram.max) },
        gc: pauses,
      };
      res.end(JSON.stringify(stats));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  // Not a reason to stay alive: the server's own listener is.
  server.unref();
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}
