/**
 * The process configuration: the environment read once into the server's options (each variable is its option's
 * name in UPPER_SNAKE_CASE), checked by the options' one schema, then passed in everywhere.
 */
import { availableParallelism } from 'node:os';
import { ConfigError, parseOptions, resolveMeter, serverOptionsSchema, type MeterConfig } from './options';

export { ConfigError } from './options';

/** The server's configuration: the library's, plus listening and shutdown. */
export interface Config extends MeterConfig {
  port: number;
  /** Worker processes sharing the port; 1 runs no cluster at all. */
  workers: number;
  host: string;
  shutdownGraceMs: number;
  metricsPort: number | undefined;
  /** Express's `trust proxy` setting for the standalone app. */
  trustProxy: boolean | number | string;
}

/** Options the environment cannot express (objects and functions): the library's alone. */
const NOT_FROM_ENV = new Set(['models', 'store', 'redis', 'logger', 'env', 'authenticate', 'onSettle', 'sessions', 'commerce']);
const NUMBERS = new Set([
  'port',
  'workers',
  'shutdownGraceSeconds',
  'upstreamConnectTimeoutMs',
  'upstreamTimeoutMs',
  'upstreamMaxFreeSockets',
  'reservationLeaseSeconds',
  'rateLimitWindowSeconds',
  'storeTimeoutMs',
  'metricsPort',
  'sessionIdleHours',
  'loginMaxFailures',
  'loginFailureWindowMinutes',
]);
const FLAGS = new Set(['redisCluster', 'logPayloads', 'metricsPerKey']);
const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);

/** `upstreamUrl` → `UPSTREAM_URL`. */
export function envName(option: string): string {
  return option.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

/** The server's options from the environment: values typed, nothing checked yet (the schema does that, once). */
export function optionsFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const option of Object.keys(serverOptionsSchema.shape)) {
    if (NOT_FROM_ENV.has(option)) continue;
    const raw = env[envName(option)];
    // An empty variable is an unset one (compose files often pass `VAR=`).
    if (raw === undefined || raw === '') continue;
    let value: unknown = raw;
    if (NUMBERS.has(option) && raw.trim() !== '' && !Number.isNaN(Number(raw))) value = Number(raw);
    if (FLAGS.has(option)) value = TRUE.has(raw) ? true : FALSE.has(raw) ? false : raw;
    // TRUST_PROXY: true, false, a hop count, or addresses (Express's own forms).
    if (option === 'trustProxy') value = raw === 'true' ? true : raw === 'false' ? false : /^\d+$/.test(raw) ? Number(raw) : raw;
    options[option] = value;
  }
  return options;
}

/** Parses the whole environment at once (tests and tools; the server lets createTokenmeter check its part). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const o = inEnvTerms(() => parseOptions(serverOptionsSchema, optionsFromEnv(env)));
  return { ...resolveMeter(o), ...listenConfig(o) };
}

/** The server's own settings from its options. */
export function listenConfig(o: {
  port: number;
  workers: number | 'auto';
  host: string;
  shutdownGraceSeconds: number;
  metricsPort?: number;
  trustProxy: boolean | number | string;
}) {
  return {
    port: o.port,
    workers: o.workers === 'auto' ? availableParallelism() : o.workers,
    host: o.host,
    shutdownGraceMs: o.shutdownGraceSeconds * 1000,
    metricsPort: o.metricsPort,
    trustProxy: o.trustProxy,
  };
}

/** Runs `parse`, restating a bad option's error in the environment's terms: one line naming the variable. */
export function inEnvTerms<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw inEnvTermsError(err);
  }
}

/** A bad option's error restated with its variable's name; any other error as it is. */
export function inEnvTermsError(err: unknown): unknown {
  if (!(err instanceof ConfigError) || err.option === undefined) return err;
  return new ConfigError(`invalid configuration: ${envName(err.option)}: ${err.detail}`, err.option, err.detail);
}
