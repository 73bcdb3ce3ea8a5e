/**
 * usage.settled throughput, for the targets with a webhook endpoint: JSON requests at full load for a while, then
 * how long until every one's event has reached the mock receiver (which counts them, batches included), and the
 * events per second delivered over the whole phase.
 */
import { closedLoop } from './load';
import { endpoint, jsonBody, settings } from './workload';

export interface WebhookThroughput {
  /** Requests completed during the load (each settles one usage.settled event). */
  requests: number;
  /** Events the receiver got once the queue drained (or the wait gave up). */
  delivered: number;
  /** From the end of the load to the last event's arrival, in seconds. */
  drainSeconds: number;
  /** Events delivered per second, from the load's start to the last arrival. */
  eventsPerSecond: number;
}

interface Stats {
  events: number;
  lastMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function stats(receiverUrl: string, reset = false): Promise<Stats> {
  const res = await fetch(`${receiverUrl}/webhook-stats`, { method: reset ? 'DELETE' : 'GET' });
  return (await res.json()) as Stats;
}

/** Waits until the receiver's count stops moving for `quietMs` (the earlier phases' events have drained). */
export async function quiet(receiverUrl: string, quietMs: number, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  let last = -1;
  let since = Date.now();
  while (Date.now() < deadline) {
    const { events } = await stats(receiverUrl);
    if (events !== last) [last, since] = [events, Date.now()];
    else if (Date.now() - since >= quietMs) return;
    await sleep(100);
  }
}

export async function webhookThroughput(port: number, key: string, receiverUrl: string): Promise<WebhookThroughput> {
  await quiet(receiverUrl, 1_000, 120_000);
  await stats(receiverUrl, true);
  const began = Date.now();
  const load = await closedLoop(endpoint(port, key, jsonBody), settings.connections, settings.maxWindowMs);
  const ended = Date.now();
  const deadline = ended + 60_000;
  let s = await stats(receiverUrl);
  while (s.events < load.completed && Date.now() < deadline) {
    await sleep(50);
    s = await stats(receiverUrl);
  }
  const last = s.lastMs || ended;
  return {
    requests: load.completed,
    delivered: s.events,
    drainSeconds: Math.max(0, last - ended) / 1000,
    eventsPerSecond: s.events / Math.max(0.001, (last - began) / 1000),
  };
}

/** The report's note for a target's phase. */
export function webhookLine(label: string, w: WebhookThroughput): string {
  return (
    `${label}: usage.settled delivery: ${w.delivered} of ${w.requests} events delivered, ` +
    `${w.eventsPerSecond.toFixed(0)} events/s over the phase, the last ${w.drainSeconds.toFixed(2)} s after the load ended`
  );
}
