/**
 * The library's options: a typed object with the environment variables' names (in camelCase) and defaults, checked
 * once with zod and resolved into the MeterConfig every part receives. The server reads them from the environment.
 */
import { hostname } from 'node:os';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import type { Authenticate, LogLevel, ServingStoreOptions, SettledRecord, TokenmeterOptions } from './option-types';
import type { Logger } from '../observability/logger';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { SessionStore } from '../store/ports/session-store';
import type { ServingStore } from '../store/ports/store';

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i;
const SIZE_MESSAGE = 'must be a size such as 1048576, 512kb or 4mb';
const byteSize = (fallback: number) =>
  z
    .union([z.number().int().positive(), z.string().regex(SIZE, SIZE_MESSAGE)], { error: SIZE_MESSAGE })
    .default(fallback)
    .transform((v) => {
      if (typeof v === 'number') return v;
      const m = SIZE.exec(v) as RegExpExecArray;
      const unit = (m[2] ?? 'b').toLowerCase();
      const mult = unit === 'gb' ? 1024 ** 3 : unit === 'mb' ? 1024 ** 2 : unit === 'kb' ? 1024 : 1;
      return Math.floor(Number(m[1]) * mult);
    });

const positiveInt = (fallback: number) =>
  z.number({ error: 'must be a whole number' }).int('must be a whole number').positive('must be greater than 0').default(fallback);
const port = z
  .number({ error: 'must be a port number' })
  .int('must be a port number')
  .min(0, 'must be 0-65535')
  .max(65535, 'must be 0-65535');
const flag = (fallback: boolean) => z.boolean({ error: 'must be true or false' }).default(fallback);
const fn = <T>() => z.custom<T>((v) => typeof v === 'function', 'must be a function');
const object = <T>(what: string) => z.custom<T>((v) => typeof v === 'object' && v !== null, `must be ${what}`);

const httpUrl = z
  .string({ error: 'must be a URL' })
  .url('must be a URL')
  .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL')
  .transform((v) => v.replace(/\/+$/, ''));

const meterShape = {
  upstreamUrl: httpUrl.default('http://127.0.0.1:8000/v1'),
  upstreamApiKey: z.string().min(1).optional(),
  models: z.unknown().optional(),
  modelsFile: z.string().min(1).default('config/models.yaml'),
  store: object<ServingStore>('a Store').optional(),
  redis: object<Redis | Cluster>('an ioredis client').optional(),
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  redisPrefix: z.string().min(1).default('tm:'),
  redisCluster: flag(false),
  journalFile: z.string().min(1).default('data/settlements.journal'),
  adminToken: z.string().min(16, 'must be at least 16 characters').optional(),
  bodyLimit: byteSize(4 * 1024 * 1024),
  upstreamResponseLimit: byteSize(16 * 1024 * 1024),
  upstreamConnectTimeoutMs: positiveInt(5_000),
  upstreamTimeoutMs: positiveInt(300_000),
  upstreamMaxFreeSockets: positiveInt(256),
  reservationLeaseSeconds: positiveInt(60),
  rateLimitWindowSeconds: positiveInt(60),
  storeTimeoutMs: positiveInt(2_000),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  logger: object<Logger>('a pino logger').optional(),
  logPayloads: flag(false),
  metricsPerKey: flag(false),
  env: object<NodeJS.ProcessEnv>('an object of environment variables').optional(),
  authenticate: fn<Authenticate>().optional(),
  onSettle: fn<(record: SettledRecord) => void | Promise<void>>().optional(),
  sessions: object<SessionStore>('a SessionStore').optional(),
  commerce: object<CommerceStore>('a CommerceStore').optional(),
  accountRegistration: z.enum(['open', 'closed'], { error: 'must be open or closed' }).default('closed'),
  sessionIdleHours: positiveInt(168),
  loginMaxFailures: positiveInt(10),
  loginFailureWindowMinutes: positiveInt(15),
  stripeSecretKey: z.string().min(1).optional(),
  stripeWebhookSecret: z.string().min(1).optional(),
  stripeApiUrl: httpUrl.optional(),
};

const listenShape = {
  port: port.default(8080),
  /** Worker processes sharing the port (node:cluster): a number, or `auto` for one per CPU. Default 1. */
  workers: z
    .union([z.number().int().positive(), z.literal('auto')], { error: 'must be a whole number greater than 0, or auto' })
    .default(1),
  host: z.string().min(1).default('0.0.0.0'),
  shutdownGraceSeconds: z.number({ error: 'must be a number of seconds' }).int().nonnegative().default(30),
  metricsPort: port.optional(),
  /**
   * Express's `trust proxy` for the standalone server (a host app keeps its own): which proxies in front may say who
   * the client is and whether it came over https. `false`, `true`, a hop count, or addresses/CIDRs. Default false.
   */
  trustProxy: z
    .union(
      [
        z.boolean(),
        z.number().int().nonnegative(),
        z.string().regex(/^([0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*|loopback|linklocal|uniquelocal)$/),
      ],
      { error: 'must be true, false, a hop count or addresses' },
    )
    .default(false),
};
export const meterOptionsSchema = z.strictObject(meterShape);
/** The server's own options, apart from the library's. */
export const listenOptionsSchema = z.strictObject(listenShape);
export const serverOptionsSchema = z.strictObject({ ...meterShape, ...listenShape });

/** Options with defaults applied and units resolved: what every part of tokenmeter is given. */
export interface MeterConfig {
  upstreamUrl: string;
  upstreamApiKey: string | undefined;
  redisUrl: string | undefined;
  redisPrefix: string;
  redisCluster: boolean;
  journalFile: string;
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
  logLevel: LogLevel;
  logPayloads: boolean;
  metricsPerKey: boolean;
  accountRegistration: 'open' | 'closed';
  sessionIdleMs: number;
  loginMaxFailures: number;
  loginFailureWindowMs: number;
  /** Set only when both Stripe secrets are. */
  stripe: { secretKey: string; webhookSecret: string; apiUrl: string | undefined } | undefined;
}

/** A bad option: `option` names it, `detail` says what is wrong. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    message: string,
    readonly option?: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** The options' services and hooks, which are passed on as they are. */
export type MeterParts = Pick<
  TokenmeterOptions,
  'models' | 'redis' | 'logger' | 'env' | 'authenticate' | 'onSettle' | 'sessions' | 'commerce'
> & { store?: ServingStore };

type ParsedMeter = z.output<typeof meterOptionsSchema>;

/** Checks the options once; throws one ConfigError naming the first bad option. */
export function parseOptions<S extends z.ZodObject>(schema: S, options: unknown): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = issue.code === 'unrecognized_keys' ? issue.keys[0] : String(issue.path[0] ?? 'options');
    const detail = issue.code === 'unrecognized_keys' ? 'is not a tokenmeter option' : issue.message;
    throw new ConfigError(`invalid tokenmeter option ${option}: ${detail}`, option, detail);
  }
  const data = parsed.data as Partial<ParsedMeter>;
  const given = [data.store && 'store', data.redis && 'redis', data.redisUrl && 'redisUrl'].filter(Boolean);
  if (given.length > 1) {
    const detail = `give one of store, redis and redisUrl, not ${given.join(' and ')}`;
    throw new ConfigError(`invalid tokenmeter option ${String(given[1])}: ${detail}`, String(given[1]), detail);
  }
  return parsed.data as z.output<S>;
}

/** The library's entry: checked options, resolved. */
export function meterConfig(options: TokenmeterOptions | ServingStoreOptions): { config: MeterConfig; parts: MeterParts } {
  const o = parseOptions(meterOptionsSchema, options);
  return { config: resolveMeter(o), parts: o };
}

export function resolveMeter(o: ParsedMeter): MeterConfig {
  return {
    upstreamUrl: o.upstreamUrl,
    upstreamApiKey: o.upstreamApiKey,
    redisUrl: o.redisUrl,
    redisPrefix: o.redisPrefix,
    redisCluster: o.redisCluster,
    // Replicas sharing a volume each need a journal of their own: `{hostname}` tells them apart.
    journalFile: o.journalFile.replaceAll('{hostname}', hostname()),
    adminToken: o.adminToken,
    modelsFile: o.modelsFile,
    bodyLimit: o.bodyLimit,
    upstreamResponseLimit: o.upstreamResponseLimit,
    upstreamConnectTimeoutMs: o.upstreamConnectTimeoutMs,
    upstreamTimeoutMs: o.upstreamTimeoutMs,
    upstreamMaxFreeSockets: o.upstreamMaxFreeSockets,
    leaseMs: o.reservationLeaseSeconds * 1000,
    limitWindowMs: o.rateLimitWindowSeconds * 1000,
    storeTimeoutMs: o.storeTimeoutMs,
    logLevel: o.logLevel,
    logPayloads: o.logPayloads,
    metricsPerKey: o.metricsPerKey,
    accountRegistration: o.accountRegistration,
    sessionIdleMs: o.sessionIdleHours * 3_600_000,
    loginMaxFailures: o.loginMaxFailures,
    loginFailureWindowMs: o.loginFailureWindowMinutes * 60_000,
    stripe:
      o.stripeSecretKey && o.stripeWebhookSecret
        ? { secretKey: o.stripeSecretKey, webhookSecret: o.stripeWebhookSecret, apiUrl: o.stripeApiUrl }
        : undefined,
  };
}
