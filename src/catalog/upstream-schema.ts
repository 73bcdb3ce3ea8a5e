/**
 * The models file's `upstreams` entries (zod): one base URL, or a pool of servers serving the same models, with how
 * the pool balances, retries, checks health and ejects outliers. Resolved into a PoolSpec by pool-spec.ts.
 */
import { z } from 'zod';
import { outputCapFieldsSchema } from './output-caps';

export const httpUrl = z
  .string()
  .url('must be a URL')
  .refine((v) => /^https?:\/\//i.test(v), 'must be an http:// or https:// URL');

/** Seconds a stream whose client left is still read for its usage (0: aborted at once). */
export const drainSeconds = z.number().int('must be a whole number of seconds').nonnegative('must be 0 or more');

/** A server's weight: its share relative to the others' (so at most 10,000 times another's). */
export const MIN_WEIGHT = 0.01;
export const MAX_WEIGHT = 100;

/** One server of a pool. */
export const serverSchema = z.strictObject({
  /** Base URL including /v1. */
  url: httpUrl,
  /** Its share of the load relative to the others, from 0.01 to 100 (a tiny float would never be chosen). Default 1. */
  weight: z
    .number()
    .min(MIN_WEIGHT, `must be between ${MIN_WEIGHT} and ${MAX_WEIGHT}`)
    .max(MAX_WEIGHT, `must be between ${MIN_WEIGHT} and ${MAX_WEIGHT}`)
    .default(1),
  /** Most requests it is sent at once; more wait up to `queue_timeout_ms` for a slot. Default: no limit. */
  max_concurrent: z.number().int().positive().optional(),
});

/** Passive outlier ejection: a server failing this many times in a row within the window is taken out for a while. */
export const outlierSchema = z.strictObject({
  /** Connect failures or 5xx answers in a row that eject a server. Default 5. */
  consecutive_failures: z.number().int().min(2).default(5),
  /** The run of failures counts only within this many milliseconds. Default 30000. */
  window_ms: z.number().int().positive().default(30_000),
  /** First ejection's length; the n-th in a row lasts n times it (as Envoy does), up to `max_ejection_ms`. Default 30000. */
  base_ejection_ms: z.number().int().positive().default(30_000),
  /** The longest an ejection lasts. Default 300000. */
  max_ejection_ms: z.number().int().positive().default(300_000),
  /** Most of a pool ejected at once, in percent (the rest serve anyway: Envoy's panic rule). Default 50. */
  max_ejection_percent: z.number().int().min(0).max(100).default(50),
});

export const upstreamSchema = z.strictObject({
  name: z.string().min(1),
  /** A single server's base URL including /v1 (or give `servers`). */
  url: httpUrl.optional(),
  /** The pool's servers, every one serving the same models (or give `url`). */
  servers: z.array(serverSchema).min(1, 'must list at least one server').optional(),
  /** Other servers tried after a connect failure, reset, 502, 503 or 429 before any byte reached the client. Default 2. */
  retries: z.number().int().nonnegative().default(2),
  /** Longest wait for a free slot when every server is at `max_concurrent`, then 503 server_overloaded. Default 1000. */
  queue_timeout_ms: z.number().int().nonnegative().default(1000),
  /** Keep requests with the same value on one server while it is healthy (for prefix caching). Default none. */
  affinity: z.enum(['prompt_cache_key', 'user', 'key']).optional(),
  /** Seconds between active health checks of a pool of two or more servers; 0: none. Default 10. */
  health_interval: z.number().nonnegative().default(10),
  /** Paths tried in order by a health check (GET, under the server's origin); any 2xx is healthy. */
  health_paths: z.array(z.string().regex(/^\//, 'must start with /')).min(1).default(['/health', '/v1/models']),
  outlier: outlierSchema.default({
    consecutive_failures: 5,
    window_ms: 30_000,
    base_ejection_ms: 30_000,
    max_ejection_ms: 300_000,
    max_ejection_percent: 50,
  }),
  /** The environment variable holding this upstream's API key (never the key itself in the file). */
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional(),
  /** Default for its models' `stream_include_usage`. */
  stream_include_usage: z.boolean().optional(),
  /** Default for its models' `output_cap_fields`. */
  output_cap_fields: outputCapFieldsSchema.optional(),
  /** Default for its models' `drain_seconds`. */
  drain_seconds: drainSeconds.optional(),
});

export type UpstreamEntry = z.output<typeof upstreamSchema>;
