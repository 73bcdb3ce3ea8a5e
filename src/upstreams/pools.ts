/**
 * The app's upstream pools, one per upstream of the models file (and one per model's own URL), built once and passed
 * in. A reload is picked up when a request or the operator next asks: pools that stay keep their servers' state.
 */
import type { Registry } from 'prom-client';
import type { Catalog, Model } from '../catalog/models';
import type { Logger } from '../observability/logger';
import { Pool, type PoolDeps } from './pool';
import { PoolMetrics } from './pool-metrics';

export interface PoolsOptions {
  maxFreeSockets: number;
  connectTimeoutMs: number;
  /** The longest silence from a server (UPSTREAM_TIMEOUT_MS), and a request's time budget for its tries. */
  timeoutMs: number;
  logger: Logger;
  registry: Registry;
}

/** One server's state now, as the operator's API shows it (src/api/upstream.ts maps it). */
export interface ServerState {
  /** Its redacted label, scheme://host:port: never the URL's userinfo, path or query. */
  url: string;
  weight: number;
  maxConcurrent: number | undefined;
  inFlight: number;
  /** Passes its health checks (or has none). */
  healthy: boolean;
  /** Ejected by the outlier detector until then (ms since the epoch); undefined: not ejected. */
  ejectedUntil: number | undefined;
  lastError: { message: string; at: number } | undefined;
}

export interface PoolState {
  name: string;
  retries: number;
  affinity: string | undefined;
  /** The models it serves. */
  models: string[];
  /** Requests a fallback model served instead, by why. */
  fallbacks: Pool['fallbacks'];
  servers: ServerState[];
}

export class Pools {
  /** By the pool's key: upstream names and models' own URLs apart. */
  private readonly byName = new Map<string, Pool>();
  private readonly deps: PoolDeps;
  private catalog: Catalog | undefined;
  readonly metrics: PoolMetrics;
  private closed = false;

  constructor(private readonly options: PoolsOptions) {
    this.metrics = new PoolMetrics(options.registry);
    this.deps = {
      timeouts: { connectMs: options.connectTimeoutMs, idleMs: options.timeoutMs },
      maxFreeSockets: options.maxFreeSockets,
      logger: options.logger,
      metrics: this.metrics,
    };
  }

  /** The request's time budget for its tries. */
  get budgetMs(): number {
    return this.options.timeoutMs;
  }

  /** Brings the pools in line with `catalog` (nothing to do when it is the one last seen). */
  sync(catalog: Catalog): void {
    if (catalog === this.catalog || this.closed) return;
    this.catalog = catalog;
    const named = new Set<string>();
    for (const model of catalog.list()) {
      named.add(model.pool.key);
      this.of(model);
    }
    for (const [name, pool] of this.byName) {
      if (named.has(name)) continue;
      pool.retire();
      this.byName.delete(name);
    }
  }

  /** The pool serving `model`, updated to its spec when the catalog was reloaded. */
  of(model: Model): Pool {
    const spec = model.pool;
    let pool = this.byName.get(spec.key);
    if (!pool) {
      pool = new Pool(spec, this.deps);
      if (!this.closed) this.byName.set(spec.key, pool);
    } else if (pool.spec !== spec) pool.update(spec);
    return pool;
  }

  /** Every pool, its models, and each server's state. */
  states(catalog: Catalog): PoolState[] {
    this.sync(catalog);
    const now = Date.now();
    return [...this.byName.values()].map((pool) => ({
      name: pool.spec.name,
      retries: pool.spec.retries,
      affinity: pool.spec.affinity,
      models: catalog
        .list()
        .filter((m) => m.pool.key === pool.spec.key)
        .map((m) => m.id),
      fallbacks: { ...pool.fallbacks },
      servers: pool.servers.map((s) => ({
        url: s.label,
        weight: s.weight,
        maxConcurrent: s.maxConcurrent,
        inFlight: s.inFlight,
        healthy: !s.unhealthy,
        ejectedUntil: s.ejected(now) ? s.ejectedUntil : undefined,
        lastError: s.lastError,
      })),
    }));
  }

  /** Stops every check and timer and closes the connections: the app is closing. */
  close(): void {
    this.closed = true;
    for (const pool of this.byName.values()) pool.close();
    this.byName.clear();
  }
}
