/** Serves the metrics registry in Prometheus text format, on the app or on its own METRICS_PORT server. */
import { createServer, type Server } from 'node:http';
import type { Request, Response } from 'express';
import type { Registry } from 'prom-client';
import type { Metrics } from './metrics';

export function metricsHandler(metrics: Metrics) {
  return async function serveMetrics(_req: Request, res: Response): Promise<void> {
    res.setHeader('content-type', metrics.registry.contentType);
    res.end(await metrics.registry.metrics());
  };
}

/**
 * A server that answers GET /metrics and nothing else, so metrics need not be exposed where clients reach. `registry`
 * is this process's, or the worker group's aggregate (its `metrics` then collects from every worker).
 */
export function metricsServer(registry: Pick<Registry, 'contentType' | 'metrics'>): Server {
  return createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
}
