/** The process configuration: parsed once from the environment with zod, then passed in everywhere. */
import { hostname } from 'node:os';
import { z } from 'zod';

const positiveInt = (fallback: number) =>
  z.coerce.number({ error: 'must be a whole number' }).int('must be a whole number').positive('must be greater than 0').default(fallback);

/** Byte sizes like `1mb`, `512kb` or a plain number of bytes. */
const byteSize = z
  .string()
  .regex(/^\d+(\.\d+)?\s*(b|kb|mb|gb)?$/i, 'must be a size such as 1048576, 512kb or 4mb')
  .transform((v) => {
    const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(v) as RegExpExecArray;
    const unit = (m[2] ?? 'b').toLowerCase();
    const mult = unit === 'gb' ? 1024 ** 3 : unit === 'mb' ? 1024 ** 2 : unit === 'kb' ? 1024 : 1;
    return Math.floor(Number(m[1]) * mult);
  });

const httpUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL')
  .transform((v) => v.replace(/\/+$/, ''));

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

/** Every environment variable tokenmeter reads, with its default. README's config table mirrors this. */
export const envSchema = z.object({
  /** Port to listen on. Default 8080. */
  PORT: z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a port number')
    .min(0, 'must be 0-65535')
    .max(65535, 'must be 0-65535')
    .default(8080),
  /** Interface to bind. Default 0.0.0.0. */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** The upstream's base URL including its /v1, as one would give an OpenAI SDK. */
  UPSTREAM_URL: httpUrl.default('http://127.0.0.1:8000/v1'),
  /** Sent upstream as `Authorization: Bearer`; unset: no Authorization header upstream. */
  UPSTREAM_API_KEY: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** REDIS_URL is one node of a Redis Cluster. Default false. */
  REDIS_CLUSTER: flag(false),
  /** Where settlements the store did not take are kept across restarts (Redis store only); `{hostname}` is replaced. */
  JOURNAL_FILE: z.string().min(1).default('data/settlements.journal'),
  /** How long SIGTERM waits for in-flight requests before closing them. Default 30 s. */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).int().nonnegative().default(30),
  /** Unset: the embedded in-memory store (one process only). */
  REDIS_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
      .optional(),
  ),
  /** Prefix of every Redis key tokenmeter writes. Default `tm:`. */
  REDIS_PREFIX: z.string().min(1).default('tm:'),
  /** Unset: the admin API is off. */
  ADMIN_TOKEN: z.preprocess(emptyAsUndefined, z.string().min(16, 'must be at least 16 characters').optional()),
  /** The models file (YAML). Default config/models.yaml. */
  MODELS_FILE: z.string().min(1).default('config/models.yaml'),
  /** Largest accepted request body. Default 4mb. */
  BODY_LIMIT: byteSize.default(4 * 1024 * 1024),
  /** Largest non-streamed upstream response we buffer to meter. Default 16mb. */
  UPSTREAM_RESPONSE_LIMIT: byteSize.default(16 * 1024 * 1024),
  /** Time allowed to open a connection to the upstream. Default 5000 ms. */
  UPSTREAM_CONNECT_TIMEOUT_MS: positiveInt(5_000),
  /** Longest silence from the upstream (before headers, or between stream bytes). Default 300000 ms. */
  UPSTREAM_TIMEOUT_MS: positiveInt(300_000),
  /** Idle keep-alive sockets kept per upstream. Default 256. */
  UPSTREAM_MAX_FREE_SOCKETS: positiveInt(256),
  /** How long a reservation lives without renewal. Default 60 s. */
  RESERVATION_LEASE_SECONDS: positiveInt(60),
  /** Length of the rpm and tpm windows. Default 60 s; shorter only for tests and demos ("per minute" then means per window). */
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
  /** Redis command timeout: a slower store counts as down (fail closed). Default 2000 ms. */
  STORE_TIMEOUT_MS: positiveInt(2_000),
  /** Serve /metrics on this port only (not on PORT). Unset: /metrics on PORT. */
  METRICS_PORT: z.preprocess(emptyAsUndefined, z.coerce.number({ error: 'must be a port number' }).int().min(0).max(65535).optional()),
  /** Label charged tokens by key id too. Default false. */
  METRICS_PER_KEY: flag(false),
  /** Put request messages in the request log (debugging only: they are customers' data). Default false. */
  LOG_PAYLOADS: flag(false),
  /** pino level. Default info. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof envSchema>;

export interface Config {
  port: number;
  host: string;
  upstreamUrl: string;
  upstreamApiKey: string | undefined;
  redisUrl: string | undefined;
  redisPrefix: string;
  redisCluster: boolean;
  journalFile: string;
  shutdownGraceMs: number;
  adminToken: string | undefined;
  modelsFile: string;
  bodyLimit: number;
  upstreamResponseLimit: number;
  upstreamConnectTimeoutMs: number;
  upstreamTimeoutMs: number;
  upstreamMaxFreeSockets: number;
  leaseMs: number;
  limitWindowMs: number;
  storeTimeoutMs: number;
  logLevel: Env['LOG_LEVEL'];
  metricsPort: number | undefined;
  metricsPerKey: boolean;
  logPayloads: boolean;
}

/** Thrown by loadConfig with a one-line message naming the variable and what is wrong. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`invalid configuration: ${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    upstreamUrl: e.UPSTREAM_URL,
    upstreamApiKey: e.UPSTREAM_API_KEY,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    redisCluster: e.REDIS_CLUSTER,
    // Replicas sharing a volume each need a journal of their own: `{hostname}` tells them apart.
    journalFile: e.JOURNAL_FILE.replaceAll('{hostname}', hostname()),
    shutdownGraceMs: e.SHUTDOWN_GRACE_SECONDS * 1000,
    adminToken: e.ADMIN_TOKEN,
    modelsFile: e.MODELS_FILE,
    bodyLimit: e.BODY_LIMIT,
    upstreamResponseLimit: e.UPSTREAM_RESPONSE_LIMIT,
    upstreamConnectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    upstreamMaxFreeSockets: e.UPSTREAM_MAX_FREE_SOCKETS,
    leaseMs: e.RESERVATION_LEASE_SECONDS * 1000,
    limitWindowMs: e.RATE_LIMIT_WINDOW_SECONDS * 1000,
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    metricsPort: e.METRICS_PORT,
    metricsPerKey: e.METRICS_PER_KEY,
    logPayloads: e.LOG_PAYLOADS,
  };
}
