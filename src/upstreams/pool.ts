/**
 * A pool of servers serving the same models: the one place a request's server is chosen, and where a try that failed
 * before any byte reached the client (connect failure, reset, 502, 503, 429) is tried again on another server. What it
 * hands back is one answer from one server, or why there is none; it never retries once it has handed an answer on.
 */
import type { PoolSpec } from '../catalog/pool-spec';
import type { Logger } from '../observability/logger';
import { attempt, type Answer, type AttemptTimeouts, type Outgoing } from './attempt';
import type { Cancellation } from './cancellation';
import { choose } from './balancer';
import { HealthChecker } from './health-checker';
import { OutlierDetector } from './outlier-detector';
import type { FallbackReason, PoolMetrics, TryOutcome } from './pool-metrics';
import { UpstreamServer } from './server';

export type PoolOutcome =
  | (Answer & { server: UpstreamServer })
  /** Every try failed before an answer; `status`: the last try's answer (502, 503, 429), drained to try elsewhere. */
  | { kind: 'failed'; err: NodeJS.ErrnoException | undefined; timedOut: boolean; status: number | undefined }
  /** Every server is at its max_concurrent, still after the queue wait. */
  | { kind: 'overloaded' }
  /** No healthy server (said only to a caller that has a fallback). */
  | { kind: 'unavailable' }
  /** The client left: nothing more to do. */
  | { kind: 'aborted' };

export interface SendOptions {
  /** The caller's leaving: no new try, the one under way cut. */
  cancellation: Cancellation;
  /** Keep requests with this key on one server while it is healthy. */
  affinityKey: string | undefined;
  /** No new try starts after this time (ms since the epoch). */
  deadline: number;
  /** The caller has a fallback: an unhealthy pool, or one whose tries all failed, says so rather than answer. */
  canFallBack: boolean;
}

export interface PoolDeps {
  timeouts: AttemptTimeouts;
  maxFreeSockets: number;
  logger: Logger;
  metrics: PoolMetrics;
}

/** A try on a kept-alive connection the server had closed is sent again this many times, not counted as a failure. */
const STALE_CONNECTION_RESENDS = 3;
const RETRYABLE_STATUS = new Set([429, 502, 503]);

export class Pool {
  servers: UpstreamServer[] = [];
  private turn = 0;
  private waiters: (() => void)[] = [];
  private readonly outliers: OutlierDetector;
  private readonly health: HealthChecker;
  /** Requests its models' fallbacks served since start, by why this pool did not (shown in /admin/upstreams). */
  readonly fallbacks: Record<FallbackReason, number> = { unhealthy: 0, failed: 0, overloaded: 0 };
  /** Its health checks have been started once. */
  private started = false;

  constructor(
    public spec: PoolSpec,
    private readonly deps: PoolDeps,
  ) {
    const list = () => this.servers;
    this.outliers = new OutlierDetector(spec.name, spec.outlier, list, deps.logger, deps.metrics);
    this.health = new HealthChecker(spec.name, list, () => this.spec, deps.timeouts.connectMs, deps.logger, deps.metrics);
    this.update(spec);
  }

  /** A reload's settings: servers that stay keep their state and requests; those that left finish what they have. */
  update(spec: PoolSpec): void {
    const before = new Map(this.servers.map((s) => [s.url, s]));
    this.servers = spec.servers.map((s) => {
      const kept = before.get(s.url);
      before.delete(s.url);
      if (kept) kept.update(s);
      return kept ?? new UpstreamServer(s.url, s, this.deps.maxFreeSockets);
    });
    for (const gone of before.values()) gone.retire();
    // The checker reads its paths and key from the spec at each round: a new interval or new paths restart it, and
    // what the old checks decided is forgotten (checks turned off must not leave a server unhealthy until a restart).
    const checksChanged =
      spec.healthIntervalMs !== this.spec.healthIntervalMs || spec.healthPaths.join('\n') !== this.spec.healthPaths.join('\n');
    this.spec = spec;
    this.outliers.update(spec.outlier);
    if (checksChanged && this.started) this.health.forget();
    if (checksChanged || !this.started) this.health.start(spec.healthIntervalMs);
    this.started = true;
  }

  /** Sends `out` to a server, and to others after a failure before the answer, up to the pool's retries. */
  async send(out: Outgoing, o: SendOptions): Promise<PoolOutcome> {
    const tried = new Set<UpstreamServer>();
    const tries = this.spec.retries + 1;
    let resends = 0;
    let queueUntil = 0;
    let last: PoolOutcome & { kind: 'failed' } = { kind: 'failed', err: undefined, timedOut: false, status: undefined };
    while (tried.size < tries) {
      if (o.cancellation.cancelled) return { kind: 'aborted' };
      const now = Date.now();
      if (tried.size > 0 && now >= o.deadline) break;
      const healthyOnly = o.canFallBack || this.servers.some((s) => !tried.has(s) && s.available(now));
      const { server, full } = choose(this.servers, tried, now, healthyOnly, this.turn++, o.affinityKey);
      if (!server) {
        if (full) {
          queueUntil ||= Math.min(now + this.spec.queueTimeoutMs, o.deadline);
          if (now < queueUntil && (await this.slotFreed(queueUntil - now, o.cancellation))) continue;
          if (tried.size === 0) return { kind: 'overloaded' };
        } else if (tried.size === 0) return { kind: 'unavailable' };
        break;
      }
      const result = await this.try(server, out, o.cancellation);
      if (result.kind === 'answer') {
        const status = result.res.statusCode ?? 502;
        const another = tried.size + 1 < tries && this.servers.some((s) => s !== server && !tried.has(s));
        if (!RETRYABLE_STATUS.has(status) || !(another || o.canFallBack)) return { ...result, server };
        // Nothing of it reached the client: drain it (the connection stays usable) and try elsewhere.
        result.res.resume();
        tried.add(server);
        last = { kind: 'failed', err: undefined, timedOut: false, status };
        continue;
      }
      if (o.cancellation.cancelled) return { kind: 'aborted' };
      const stale = result.reusedSocket && !result.timedOut && (result.err.code === 'ECONNRESET' || result.err.code === 'EPIPE');
      if (stale && resends < STALE_CONNECTION_RESENDS) {
        // The server closed this kept-alive connection as we reused it: the request never reached it. Each resend uses
        // up one such connection; the last ones end on a fresh connection, whose failure counts.
        resends++;
        this.deps.logger.info({ pool: this.spec.name, server: server.label }, 'upstream closed a pooled connection: sending again');
        continue;
      }
      tried.add(server);
      last = { kind: 'failed', err: result.err, timedOut: result.timedOut, status: undefined };
    }
    return last;
  }

  /** One try at one server, counted in its in-flight number until the answer ends (or the try fails). */
  private async try(server: UpstreamServer, out: Outgoing, cancellation: Cancellation) {
    const labels = { pool: this.spec.name, server: server.label };
    const { metrics } = this.deps;
    server.started();
    metrics.inFlight.inc(labels);
    const done = () => {
      server.ended();
      metrics.inFlight.dec(labels);
      this.waiters.shift()?.();
    };
    const began = performance.now();
    const result = await attempt(server, out, this.deps.timeouts, cancellation);
    if (result.kind === 'error') {
      done();
      if (cancellation.cancelled) return result;
      this.record(server, result.timedOut ? 'timeout' : 'connect_error', `${result.err.code ?? result.err.message}`);
      return result;
    }
    result.res.once('close', done);
    metrics.latency.observe(labels, (performance.now() - began) / 1000);
    const status = result.res.statusCode ?? 502;
    this.record(server, status >= 500 ? 'status_5xx' : status === 429 ? 'status_429' : 'answered', `status ${status}`);
    return result;
  }

  private record(server: UpstreamServer, outcome: TryOutcome, what: string): void {
    this.deps.metrics.requests.inc({ pool: this.spec.name, server: server.label, outcome });
    if (outcome === 'answered') return this.outliers.succeeded(server);
    server.noteError(what);
    // A 429 is a busy server, not a broken one: tried elsewhere, never ejected for it.
    if (outcome !== 'status_429') this.outliers.failed(server, Date.now());
  }

  /** Resolves true when a server's request ends within `ms`, false after it (or when the client leaves). */
  private slotFreed(ms: number, cancellation: Cancellation): Promise<boolean> {
    return new Promise((resolve) => {
      const woken = () => {
        clearTimeout(timer);
        off();
        resolve(true);
      };
      const gone = () => {
        clearTimeout(timer);
        off();
        this.waiters = this.waiters.filter((w) => w !== woken);
        resolve(false);
      };
      const timer = setTimeout(gone, ms);
      const off = cancellation.onCancel(gone);
      this.waiters.push(woken);
    });
  }

  /** Stops its checks and timers and closes its connections (requests under way are cut). */
  close(): void {
    this.health.stop();
    this.outliers.stop();
    for (const s of this.servers) s.close();
  }

  /** Stops its checks and timers; its servers finish what they have, then close their connections. */
  retire(): void {
    this.health.stop();
    this.outliers.stop();
    for (const s of this.servers) s.retire();
  }
}
