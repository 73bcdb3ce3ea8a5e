/** The pools' Prometheus metrics, per server (label `server`: its redacted scheme://host:port, bounded by the models file). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** How one try at a server ended (up to its response head). */
export type TryOutcome = 'answered' | 'status_5xx' | 'status_429' | 'connect_error' | 'timeout';

/** Why a pool handed a request to its model's fallback: no healthy server, every try failed, every server busy. */
export type FallbackReason = 'unhealthy' | 'failed' | 'overloaded';

export class PoolMetrics {
  readonly inFlight: Gauge<'pool' | 'server'>;
  readonly requests: Counter<'pool' | 'server' | 'outcome'>;
  readonly ejected: Gauge<'pool' | 'server'>;
  readonly ejections: Counter<'pool' | 'server'>;
  readonly healthy: Gauge<'pool' | 'server'>;
  readonly latency: Histogram<'pool' | 'server'>;
  readonly failovers: Counter<'model' | 'fallback' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.inFlight = new Gauge({
      name: 'tokenmeter_upstream_in_flight',
      help: 'Requests a server of a pool has in flight (a stream until its last byte).',
      labelNames: ['pool', 'server'],
      registers,
    });
    this.requests = new Counter({
      name: 'tokenmeter_upstream_requests_total',
      help: 'Tries at a server, by how they ended before any byte reached the client: answered, status_5xx, status_429, connect_error, timeout.',
      labelNames: ['pool', 'server', 'outcome'],
      registers,
    });
    this.ejected = new Gauge({
      name: 'tokenmeter_upstream_ejected',
      help: '1 while the outlier detector has a server ejected, else 0.',
      labelNames: ['pool', 'server'],
      registers,
    });
    this.ejections = new Counter({
      name: 'tokenmeter_upstream_ejections_total',
      help: 'Times the outlier detector ejected a server.',
      labelNames: ['pool', 'server'],
      registers,
    });
    this.healthy = new Gauge({
      name: 'tokenmeter_upstream_healthy',
      help: "1 while a server passes its pool's active health check, else 0.",
      labelNames: ['pool', 'server'],
      registers,
    });
    this.latency = new Histogram({
      name: 'tokenmeter_upstream_response_seconds',
      help: 'Time from sending to a server to its response head, per server.',
      labelNames: ['pool', 'server'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.failovers = new Counter({
      name: 'tokenmeter_upstream_fallbacks_total',
      help: "Requests a model's pool could not answer that went to a fallback model, by why: unhealthy, failed, overloaded.",
      labelNames: ['model', 'fallback', 'reason'],
      registers,
    });
  }
}
