/**
 * Active health: every interval, each server of a pool is asked its health paths in order (GET, under its origin;
 * any 2xx is healthy, the next path is tried after anything else). Its timer is unref'd and stopped with the pool.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { PoolSpec } from '../catalog/pool-spec';
import type { Logger } from '../observability/logger';
import type { PoolMetrics } from './pool-metrics';
import type { UpstreamServer } from './server';

/** What one path's check found: healthy, or why not. */
function check(server: UpstreamServer, path: string, timeoutMs: number, apiKey: string | undefined): Promise<string | undefined> {
  const send = server.https ? httpsRequest : httpRequest;
  const headers = apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
  const options = { hostname: server.hostname, port: server.port, path, method: 'GET', headers, agent: server.agent, timeout: timeoutMs };
  return new Promise((resolve) => {
    const req = send(options, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      resolve(status >= 200 && status < 300 ? undefined : `health check ${path}: status ${status}`);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`health check ${path}: ${err.code ?? err.message}`));
    req.end();
  });
}

export class HealthChecker {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly pool: string,
    private readonly servers: () => readonly UpstreamServer[],
    /** Its paths and the upstream's key, read at each round (a reload may change them). */
    private readonly settings: () => Pick<PoolSpec, 'healthPaths' | 'apiKey'>,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly metrics: PoolMetrics,
  ) {}

  start(intervalMs: number): void {
    this.stop();
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => void this.round(), intervalMs);
    this.timer.unref();
    void this.round();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check of every server; a round still running when the next is due lets it pass. */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await Promise.all(this.servers().map((s) => this.checkServer(s)));
    } finally {
      this.running = false;
    }
  }

  private async checkServer(server: UpstreamServer): Promise<void> {
    let failure: string | undefined;
    const { healthPaths, apiKey } = this.settings();
    for (const path of healthPaths) {
      // Health paths are under the server's origin: `/health` is vLLM's, beside its `/v1`.
      failure = await check(server, path, this.timeoutMs, apiKey);
      if (failure === undefined) break;
    }
    const labels = { pool: this.pool, server: server.label };
    this.metrics.healthy.set(labels, failure === undefined ? 1 : 0);
    if (failure !== undefined) {
      server.noteError(failure);
      if (!server.unhealthy) this.logger.warn({ ...labels, failure }, 'upstream server failed its health check');
      server.unhealthy = true;
    } else if (server.unhealthy) {
      server.unhealthy = false;
      this.logger.info(labels, 'upstream server passed its health check');
    }
  }
}
