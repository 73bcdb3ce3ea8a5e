/**
 * Metrics of the whole worker group: each worker answers the primary's collection with its own registry
 * (prom-client's cluster aggregation), and a worker's /metrics asks the primary for the aggregate over IPC, so a
 * scrape of any worker, or of the primary's METRICS_PORT, reports every worker.
 */
import cluster from 'node:cluster';
import type { Request, Response } from 'express';
import { AggregatorRegistry, type PrometheusContentType, type Registry } from 'prom-client';

const ASK = 'tokenmeter:group-metrics';
const ANSWER = 'tokenmeter:group-metrics-answer';
/** prom-client gives up on a silent worker after 5 s; the asking worker waits a little longer for the primary's answer. */
const ASK_TIMEOUT_MS = 6_000;

type Ask = { type: typeof ASK; id: number };
type Answer = { type: typeof ANSWER; id: number; text?: string; error?: string };

const isMessage = <T extends { type: string }>(m: unknown, type: T['type']): m is T =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type;

/** In the primary: collects and aggregates every worker's metrics, for its own METRICS_PORT and for workers that ask. */
export function groupMetricsInPrimary(): AggregatorRegistry<PrometheusContentType> {
  const aggregator = new AggregatorRegistry<PrometheusContentType>();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<Ask>(message, ASK)) return;
    const reply = (answer: Omit<Answer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer } satisfies Answer);
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (err: Error) => reply({ error: err.message }),
    );
  });
  return aggregator;
}

/** In a worker: offers this worker's registry to the primary's collection, and serves the group's metrics. */
export function groupMetricsInWorker(registry: Registry): (req: Request, res: Response) => Promise<void> {
  // Constructing one installs prom-client's answer to the primary's collection (once per process).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const waiting = new Map<number, (answer: Answer) => void>();
  let next = 0;
  process.on('message', (message: unknown) => {
    if (isMessage<Answer>(message, ANSWER)) waiting.get(message.id)?.(message);
  });

  const ask = () =>
    new Promise<Answer>((resolve) => {
      const id = next++;
      const timer = setTimeout(() => done({ type: ANSWER, id, error: 'the primary did not answer' }), ASK_TIMEOUT_MS);
      const done = (answer: Answer) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(answer);
      };
      waiting.set(id, done);
      process.send?.({ type: ASK, id } satisfies Ask);
    });

  return async function serveGroupMetrics(_req: Request, res: Response): Promise<void> {
    const answer = await ask();
    if (answer.text === undefined) {
      res
        .status(503)
        .type('text/plain')
        .end(`metrics of the worker group unavailable: ${answer.error ?? 'no answer'}\n`);
      return;
    }
    res.setHeader('content-type', registry.contentType);
    res.end(answer.text);
  };
}
