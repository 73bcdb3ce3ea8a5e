/**
 * Passive health: a server that fails N times in a row within a window (connect failures, resets, timeouts, 5xx) is
 * ejected for the base time times the ejections in a row (Envoy's rule), up to a maximum; one error never ejects, a
 * success ends the run, and no more than the pool's max_ejection_percent is ejected at once (the rest serve anyway).
 */
import type { OutlierSpec } from '../catalog/pool-spec';
import type { Logger } from '../observability/logger';
import type { PoolMetrics } from './pool-metrics';
import type { UpstreamServer } from './server';

export class OutlierDetector {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly pool: string,
    private spec: OutlierSpec,
    private readonly servers: () => readonly UpstreamServer[],
    private readonly logger: Logger,
    private readonly metrics: PoolMetrics,
  ) {}

  update(spec: OutlierSpec): void {
    this.spec = spec;
  }

  succeeded(server: UpstreamServer): void {
    server.failures = 0;
    if (!server.ejected(Date.now())) server.ejections = 0;
  }

  failed(server: UpstreamServer, now: number): void {
    if (server.failures === 0 || now - server.failingSince > this.spec.windowMs) {
      server.failures = 0;
      server.failingSince = now;
    }
    server.failures++;
    if (server.failures < this.spec.consecutiveFailures || server.ejected(now)) return;
    const all = this.servers();
    const ejected = all.filter((s) => s.ejected(now)).length;
    if (ejected + 1 > Math.floor((all.length * this.spec.maxEjectionPercent) / 100)) {
      this.logger.warn(
        { pool: this.pool, server: server.label, failures: server.failures },
        'upstream server failing, not ejected: too much of its pool is out',
      );
      return;
    }
    const ms = Math.min(this.spec.baseEjectionMs * (server.ejections + 1), Math.max(this.spec.baseEjectionMs, this.spec.maxEjectionMs));
    server.ejections++;
    server.failures = 0;
    server.ejectedUntil = now + ms;
    this.metrics.ejected.set({ pool: this.pool, server: server.label }, 1);
    this.metrics.ejections.inc({ pool: this.pool, server: server.label });
    this.logger.warn({ pool: this.pool, server: server.label, ejectedMs: ms, ejections: server.ejections }, 'upstream server ejected');
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (server.ejected(Date.now())) return;
      this.metrics.ejected.set({ pool: this.pool, server: server.label }, 0);
      this.logger.info({ pool: this.pool, server: server.label }, 'upstream server re-admitted');
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
