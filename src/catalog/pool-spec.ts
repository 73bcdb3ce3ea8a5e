/** A pool of upstream servers as the catalog resolves it: what the runtime pool (src/upstreams/) is built from. */
import { serverUrl } from './server-url';
import type { UpstreamEntry } from './upstream-schema';

export interface ServerSpec {
  /** Base URL including /v1 (and its query, if any), normalised (server-url.ts): the server's identity in its pool. */
  url: string;
  /** scheme://host:port, what metrics, the operator's API and the logs show (the URL may hold secrets). */
  label: string;
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
  /**
   * The pool's identity: `upstream:<name>` for a named upstream, `url:<url>` for a model's own `upstream_url` (two
   * namespaces, so an upstream named like a URL never shares a model's pool).
   */
  key: string;
  /** What it is shown as: the upstream's name, or the id of the first model served by its own URL (never the URL). */
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
  const given = u.servers ?? [{ url: u.url as string, weight: 1, max_concurrent: undefined }];
  const where = (i: number) => (u.servers ? `upstream ${u.name}: servers[${i}].url` : `upstream ${u.name}: url`);
  const servers = labelled(
    given.map((s, i) => ({ ...normalised(s.url, where(i), fail), weight: s.weight, maxConcurrent: s.max_concurrent })),
  );
  servers.forEach((s, i) => {
    const first = servers.findIndex((other) => other.url === s.url);
    if (first !== i) throw fail(`upstream ${u.name}: servers[${first}] and servers[${i}] are the same server (${servers[first].label})`);
  });
  const o = u.outlier;
  return {
    key: `upstream:${u.name}`,
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

/** A model's own URL (`upstream_url`, or UPSTREAM_URL): a pool of one, shown by the id of `model`. */
export function singleServerPool(url: string, model: string, where: string, fail: (msg: string) => Error): PoolSpec {
  const server = normalised(url, where, fail);
  return {
    key: `url:${server.url}`,
    name: model,
    servers: [{ ...server, weight: 1, maxConcurrent: undefined }],
    retries: 0,
    queueTimeoutMs: 0,
    affinity: undefined,
    healthIntervalMs: 0,
    healthPaths: ['/health', '/v1/models'],
    apiKey: undefined,
    outlier: DEFAULT_OUTLIER,
  };
}

function normalised(raw: string, where: string, fail: (msg: string) => Error): { url: string; label: string } {
  const server = serverUrl(raw, where);
  if (typeof server === 'string') throw fail(server);
  return server;
}

/** Servers of one pool on one host and port (different paths) get `#2`, `#3`… so that each label names one server. */
function labelled<T extends { label: string }>(servers: T[]): T[] {
  const seen = new Map<string, number>();
  return servers.map((s) => {
    const n = (seen.get(s.label) ?? 0) + 1;
    seen.set(s.label, n);
    return n === 1 ? s : { ...s, label: `${s.label}#${n}` };
  });
}
