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

/** Why a check failed: the path asked, and its status or the connection's error code. */
interface Failure {
  path: string;
  status: number | undefined;
  error: string | undefined;
}

const describe = (f: Failure) => `health check ${f.path}: ${f.status === undefined ? f.error : `status ${f.status}`}`;

/** What one path's check found: healthy, or why not. */
function check(server: UpstreamServer, path: string, timeoutMs: number, apiKey: string | undefined): Promise<Failure | undefined> {
  const send = server.https ? httpsRequest : httpRequest;
  const headers = apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
  const options = { hostname: server.hostname, port: server.port, path, method: 'GET', headers, agent: server.agent, timeout: timeoutMs };
  return new Promise((resolve) => {
    const req = send(options, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      resolve(status >= 200 && status < 300 ? undefined : { path, status, error: undefined });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ path, status: undefined, error: err.code ?? err.message }));
    req.end();
  });
}

export class HealthChecker {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The next round is the first since start(): a pool failing all of it says how to fix that. */
  private first = true;

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
    this.first = true;
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => void this.round(), intervalMs);
    this.timer.unref();
    void this.round();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Forgets what earlier checks decided (a reload turned them off or changed them): every server is trusted again. */
  forget(): void {
    for (const server of this.servers()) {
      server.unhealthy = false;
      this.metrics.healthy.remove({ pool: this.pool, server: server.url });
    }
  }

  /** One check of every server; a round still running when the next is due lets it pass. */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const servers = this.servers();
      const first = this.first;
      this.first = false;
      const failures = await Promise.all(servers.map((s) => this.checkServer(s, first)));
      if (!first) return;
      const allFailed = failures.every((f) => f !== undefined);
      failures.forEach((f, i) => f && (allFailed ? this.explain(servers[i], f) : this.warn(servers[i], f)));
    } finally {
      this.running = false;
    }
  }

  private warn(server: UpstreamServer, f: Failure): void {
    this.logger.warn({ pool: this.pool, server: server.url, failure: describe(f) }, 'upstream server failed its health check');
  }

  /** A pool with no healthy server at its first check sends every request to a fallback: one line per server on why. */
  private explain(server: UpstreamServer, f: Failure): void {
    const fix =
      f.status === undefined
        ? `the server is not reachable at ${server.url}: start it, or correct its url`
        : `serve GET ${f.path} with a 2xx there, set the upstream's health_paths to a path the server answers, or health_interval: 0 to turn checks off`;
    this.logger.error(
      { pool: this.pool, server: server.url, path: f.path, status: f.status ?? null, error: f.error ?? null, fix },
      'no server of the pool passed its first health check: its models go to their fallbacks, or fail',
    );
  }

  /** Checks one server; its failure, if any (a first round's failures are logged by round(), which sees them all). */
  private async checkServer(server: UpstreamServer, first: boolean): Promise<Failure | undefined> {
    let failure: Failure | undefined;
    const { healthPaths, apiKey } = this.settings();
    for (const path of healthPaths) {
      // Health paths are under the server's origin: `/health` is vLLM's, beside its `/v1`.
      failure = await check(server, path, this.timeoutMs, apiKey);
      if (failure === undefined) break;
    }
    const labels = { pool: this.pool, server: server.label };
    this.metrics.healthy.set(labels, failure === undefined ? 1 : 0);
    if (failure !== undefined) {
      server.noteError(describe(failure));
      if (!server.unhealthy && !first) this.warn(server, failure);
      server.unhealthy = true;
    } else if (server.unhealthy) {
      server.unhealthy = false;
      this.logger.info(labels, 'upstream server passed its health check');
    }
    return failure;
  }
}
