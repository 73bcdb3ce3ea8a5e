/** A pool of upstream servers as the catalog resolves it: what the runtime pool (src/upstreams/) is built from. */
import type { UpstreamEntry } from './upstream-schema';

export interface ServerSpec {
  /** Base URL including /v1, without a trailing slash. */
  url: string;
  weight: number;
  /** Undefined: no limit. */
  maxConcurrent: number | undefined;
}

export type AffinityKey = 'prompt_cache_key' | 'user' | 'key';

export interface OutlierSpec {
  consecutiveFailures: number;
  windowMs: number;
  baseEjectionMs: number;
  maxEjectionMs: number;
  maxEjectionPercent: number;
}

export interface PoolSpec {
  /** The upstream's name, or the URL of a model's own `upstream_url`. */
  name: string;
  servers: readonly ServerSpec[];
  retries: number;
  queueTimeoutMs: number;
  affinity: AffinityKey | undefined;
  /** 0: no active checks (always so for a one-server pool: there is nowhere else to send its requests). */
  healthIntervalMs: number;
  healthPaths: readonly string[];
  /** Sent with health checks (`/v1/models` wants it on most servers); the upstream's `api_key_env`. */
  apiKey: string | undefined;
  outlier: OutlierSpec;
}

const trimmed = (url: string) => url.replace(/\/+$/, '');

/** The default outlier rule and health paths, for a pool the file gives no settings (a model's own `upstream_url`). */
const DEFAULT_OUTLIER: OutlierSpec = {
  consecutiveFailures: 5,
  windowMs: 30_000,
  baseEjectionMs: 30_000,
  maxEjectionMs: 300_000,
  maxEjectionPercent: 50,
};

/** A named upstream: its `servers`, or its one `url`. */
export function poolOf(u: UpstreamEntry, apiKey: string | undefined, fail: (msg: string) => Error): PoolSpec {
  if ((u.url === undefined) === (u.servers === undefined)) throw fail(`upstream ${u.name}: give url or servers, not both or neither`);
  const servers = u.servers
    ? u.servers.map((s) => ({ url: trimmed(s.url), weight: s.weight, maxConcurrent: s.max_concurrent }))
    : [{ url: trimmed(u.url as string), weight: 1, maxConcurrent: undefined }];
  const urls = new Set(servers.map((s) => s.url));
  if (urls.size !== servers.length) throw fail(`upstream ${u.name}: a server is listed twice`);
  const o = u.outlier;
  return {
    name: u.name,
    servers,
    retries: u.retries,
    queueTimeoutMs: u.queue_timeout_ms,
    affinity: u.affinity,
    healthIntervalMs: servers.length > 1 ? Math.round(u.health_interval * 1000) : 0,
    healthPaths: u.health_paths,
    apiKey,
    outlier: {
      consecutiveFailures: o.consecutive_failures,
      windowMs: o.window_ms,
      baseEjectionMs: o.base_ejection_ms,
      maxEjectionMs: o.max_ejection_ms,
      maxEjectionPercent: o.max_ejection_percent,
    },
  };
}

/** A model's own URL (`upstream_url`, or UPSTREAM_URL): a pool of one, named by its URL. */
export function singleServerPool(url: string): PoolSpec {
  const base = trimmed(url);
  return {
    name: base,
    servers: [{ url: base, weight: 1, maxConcurrent: undefined }],
    retries: 0,
    queueTimeoutMs: 0,
    affinity: undefined,
    healthIntervalMs: 0,
    healthPaths: ['/health', '/v1/models'],
    apiKey: undefined,
    outlier: DEFAULT_OUTLIER,
  };
}
