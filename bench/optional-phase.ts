/** The phases of the endpoints beside chat (embeddings, Responses streams): measured where the target serves them. */
import { closedLoop, type Endpoint } from './load';
import type { Window } from './measure';
import { settings } from './workload';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A pause before the measured window, as between measure's phases. */
const PAUSE_MS = 300;

/**
 * A phase of an endpoint some targets do not serve (an earlier build): probed first, and measured (warm-up, then max
 * req/s) only when the probe succeeds; NaN otherwise, and its failures not counted.
 */
export async function optionalPhase(
  saturate: (pid: number, e: Endpoint) => Promise<Window>,
  pid: number,
  e: Endpoint,
  name: string,
  log: (line: string) => void,
): Promise<Window> {
  const probe = await closedLoop(e, 1, 200);
  if (probe.completed === 0) {
    log(`${name}: not served by this target, skipped`);
    return { rps: NaN, cpuUs: NaN, busyPct: NaN, syscalls: NaN, failed: 0 };
  }
  await closedLoop(e, settings.connections, settings.warmupMs / 3);
  await sleep(PAUSE_MS);
  const w = await saturate(pid, e);
  log(`${name}: ${w.rps.toFixed(0)} req/s, ${w.cpuUs.toFixed(0)} µs CPU/request, target ${w.busyPct.toFixed(0)} % busy`);
  return w;
}
