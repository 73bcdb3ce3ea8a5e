/**
 * Every option tokenmeter reads from the environment, written once: its name (the key; the variable is the same name
 * in UPPER_SNAKE_CASE), its kind of value with its default, and its doc (the JSDoc above it, which the options' types
 * carry). `meter` options are also createTokenmeter's; `server` ones are the process's alone. The library's schema,
 * the environment's parser and the TypeScript types are all derived from this table.
 *
 * Adding an option: one entry here (the kind's argument is the default), then its row in docs/configuration.md's
 * table (and, for a `meter` option, in docs/library.md's options table); test/config/option-table.test.ts says
 * what is missing. Its value reaches the code as `config.<name>`.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { NOT_FORWARDABLE } from '../http/http-headers';
import { MAX_GRANT_TOKENS } from '../store/records/account';
import {
  count,
  flag,
  headerNames,
  oneOf,
  port,
  proxyTrust,
  seconds,
  size,
  text,
  url,
  whole,
  workerCount,
  type OptionKind,
} from './option-kinds';

export type Scope = 'meter' | 'server';

/** One option: its variable, its scope, and its kind of value (with its default). */
export interface OptionDef<S extends z.ZodType = z.ZodType, Sc extends Scope = Scope> extends OptionKind<S> {
  env: string;
  scope: Sc;
}

const meter = <S extends z.ZodType>(env: string, kind: OptionKind<S>): OptionDef<S, 'meter'> => ({ env, scope: 'meter', ...kind });
const server = <S extends z.ZodType>(env: string, kind: OptionKind<S>): OptionDef<S, 'server'> => ({ env, scope: 'server', ...kind });

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const OPTIONS = {
  /** The port to listen on. */
  port: server('PORT', port(8080)),
  /** Worker processes sharing the port (node:cluster), or `auto` for one per CPU; more than 1 needs `redisUrl`. */
  workers: server('WORKERS', workerCount(1)),
  /** The interface to bind. */
  host: server('HOST', text('0.0.0.0')),
  /** The upstream's base URL including `/v1`, exactly what you would give an OpenAI SDK. */
  upstreamUrl: meter('UPSTREAM_URL', url('http://127.0.0.1:8000/v1')),
  /** Sent upstream as `Authorization: Bearer`; unset: no Authorization header upstream. */
  upstreamApiKey: meter('UPSTREAM_API_KEY', text()),
  /** Client headers forwarded upstream besides `accept` (comma-separated names); unset: none. */
  upstreamForwardHeaders: meter('UPSTREAM_FORWARD_HEADERS', headerNames(NOT_FORWARDABLE)),
  /** `redis://` or `rediss://`: tokenmeter opens (and closes) its own connection. Unset: the memory store. */
  redisUrl: meter('REDIS_URL', text(undefined, z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://'))),
  /** Prefix of every Redis key tokenmeter writes. */
  redisPrefix: meter('REDIS_PREFIX', text('tm:')),
  /** `redisUrl` is one node of a Redis Cluster (the others are discovered). */
  redisCluster: meter('REDIS_CLUSTER', flag(false)),
  /**
   * With Redis: settlements Redis could not take yet, kept across restarts; one per instance (`{hostname}` in the
   * path is replaced, for replicas sharing a volume).
   */
  journalFile: meter(
    'JOURNAL_FILE',
    text(
      'data/settlements.journal',
      z
        .string()
        .min(1)
        .transform((v) => v.replaceAll('{hostname}', hostname())),
    ),
  ),
  /** On SIGTERM, how long in-flight requests may finish before their connections are closed. */
  shutdownGraceSeconds: server('SHUTDOWN_GRACE_SECONDS', seconds(30)),
  /** Enables the admin API, `meter.admin` (at least 16 characters). Unset: the admin router passes every request on. */
  adminToken: meter('ADMIN_TOKEN', text(undefined, z.string().min(16, 'must be at least 16 characters'))),
  /** The models file (YAML), when the `models` option is not given. */
  modelsFile: meter('MODELS_FILE', text('config/models.yaml')),
  /** Largest request body: a number of bytes, or a string like `512kb`, `4mb`. */
  bodyLimit: meter('BODY_LIMIT', size('4mb')),
  /** Largest non-streamed upstream response buffered for metering. */
  upstreamResponseLimit: meter('UPSTREAM_RESPONSE_LIMIT', size('16mb')),
  /** A request body not fully received this long after it reached tokenmeter gets 408 and its connection closed. */
  bodyTimeoutSeconds: meter('BODY_TIMEOUT_SECONDS', whole(30)),
  /** Time to open a connection upstream. */
  upstreamConnectTimeoutMs: meter('UPSTREAM_CONNECT_TIMEOUT_MS', whole(5_000)),
  /** Longest upstream silence, before its headers or between stream bytes. */
  upstreamTimeoutMs: meter('UPSTREAM_TIMEOUT_MS', whole(300_000)),
  /**
   * How long a stream whose client left is still read (forwarding nothing) for its usage; 0 aborts it at once. Per
   * upstream or model too: the models file's `drain_seconds`.
   */
  upstreamDrainSeconds: meter('UPSTREAM_DRAIN_SECONDS', seconds(30)),
  /** Idle keep-alive connections kept per upstream. */
  upstreamMaxFreeSockets: meter('UPSTREAM_MAX_FREE_SOCKETS', whole(256)),
  /** A reservation's lease, renewed every third of it while its request runs. */
  reservationLeaseSeconds: meter('RESERVATION_LEASE_SECONDS', whole(60)),
  /** The window of rpm and tpm limits; shorter only for tests and demos. */
  rateLimitWindowSeconds: meter('RATE_LIMIT_WINDOW_SECONDS', whole(60)),
  /** A Redis command slower than this counts as a store failure. */
  storeTimeoutMs: meter('STORE_TIMEOUT_MS', whole(2_000)),
  /** The level of tokenmeter's own logger (ignored with the `logger` option). */
  logLevel: meter('LOG_LEVEL', oneOf(LOG_LEVELS, 'info')),
  /** Put request messages in the request log (debugging only: it is your customers' data). */
  logPayloads: meter('LOG_PAYLOADS', flag(false)),
  /** Serve `/metrics` only on this port, so it need not be exposed where clients reach. Unset: on `port`. */
  metricsPort: server('METRICS_PORT', port()),
  /** Also count charged tokens by key and account id; one series per key. */
  metricsPerKey: meter('METRICS_PER_KEY', flag(false)),
  /** `open`: anyone may register an account at `POST /console/api/register`; `closed`: the operator creates them. */
  accountRegistration: meter('ACCOUNT_REGISTRATION', oneOf(['open', 'closed'], 'closed', 'must be open or closed')),
  /** A console session ends after this many hours unused. */
  sessionIdleHours: meter('SESSION_IDLE_HOURS', whole(168)),
  /** A console session ends this many hours after login, however much it is used. */
  sessionMaxHours: meter('SESSION_MAX_HOURS', whole(720)),
  /** Failed console logins allowed per account and per client address in each window. */
  loginMaxFailures: meter('LOGIN_MAX_FAILURES', whole(10)),
  /** The failed-login window, in minutes. */
  loginFailureWindowMinutes: meter('LOGIN_FAILURE_WINDOW_MINUTES', whole(15)),
  /** Tokens of the trial package each self-service registration gets, once per account; unset: none. */
  signupTokens: meter('SIGNUP_TOKENS', whole(undefined, MAX_GRANT_TOKENS)),
  /** Days the trial package of `signupTokens` stays valid; unset: it never expires. */
  signupTokensValidDays: meter('SIGNUP_TOKENS_VALID_DAYS', whole()),
  /** Console registrations allowed per client address in each hour: a budget apart from failed logins. */
  registrationsPerHour: meter('REGISTRATIONS_PER_HOUR', whole(10)),
  /** The most API keys an account may have, revoked and expired ones included (they are kept). */
  maxKeysPerAccount: meter('MAX_KEYS_PER_ACCOUNT', whole(100)),
  /**
   * Express's `trust proxy` for the standalone server (a host app keeps its own): which proxies in front may say who
   * the client is and whether it came over https. `false`, `true`, a hop count, or addresses/CIDRs.
   */
  trustProxy: server('TRUST_PROXY', proxyTrust(false)),
  /** Stripe's secret API key; with `stripeWebhookSecret`, turns on Checkout. */
  stripeSecretKey: meter('STRIPE_SECRET_KEY', text()),
  /** The signing secret of the Stripe webhook endpoint (`whsec_…`). */
  stripeWebhookSecret: meter('STRIPE_WEBHOOK_SECRET', text()),
  /** Where the Stripe client sends API calls (stripe-mock, tests). Unset: Stripe itself. */
  stripeApiUrl: meter('STRIPE_API_URL', url()),
  /**
   * balance.low fires when an account's balance (packages less debt) falls below this many tokens, unless it has its
   * own threshold. Unset: `lowBalancePercent` of the account's last grant.
   */
  lowBalanceTokens: meter('LOW_BALANCE_TOKENS', whole()),
  /** Without `lowBalanceTokens`, balance.low's threshold for an account without its own: this percent of its last grant. */
  lowBalancePercent: meter('LOW_BALANCE_PERCENT', whole(20, 100)),
  /** A webhook receiver slower than this to answer counts as a failed attempt. */
  webhookTimeoutMs: meter('WEBHOOK_TIMEOUT_MS', whole(10_000)),
  /**
   * On `redisUrl`: deliver webhooks from a thread of the process's own (its own event loop, heap and Redis
   * connection), apart from the requests' event loop: for a process with more than one core. Off (the default), or on
   * the embedded store or a host's Redis client: in the process's event loop.
   */
  webhookDeliveryThread: meter('WEBHOOK_DELIVERY_THREAD', flag(false)),
  /** package.expiring fires this many days before a package with tokens left expires. */
  packageExpiringDays: meter('PACKAGE_EXPIRING_DAYS', whole(7)),
  /**
   * `postgres://…`: the ledger's long-term home (docs/ledger-archive.md); needs `redisUrl`. Records are shipped there
   * and trimmed from Redis behind them. Unset: Redis keeps the ledger.
   */
  ledgerDatabaseUrl: meter('LEDGER_DATABASE_URL', text(undefined, z.string().regex(/^postgres(ql)?:\/\//, 'must start with postgres://'))),
  /** With the archive: hours of shipped records (and response owners, past their day) Redis keeps besides the unshipped ones (0: only the unshipped). */
  ledgerHotHours: meter('LEDGER_HOT_HOURS', count(48)),
  /** With the archive: months of records PostgreSQL keeps (whole months dropped). Unset: all. */
  ledgerRetentionMonths: meter('LEDGER_RETENTION_MONTHS', whole()),
  /** Without the archive: days of ledger records Redis keeps (export them first). Unset: all. */
  ledgerTrimAfterDays: meter('LEDGER_TRIM_AFTER_DAYS', whole()),
};

type Table = typeof OPTIONS;
export type OptionName = keyof Table;

/** The schemas of the options of the given scopes, by name. */
export type ShapeOf<S extends Scope> = { [K in keyof Table as Table[K]['scope'] extends S ? K : never]: Table[K]['schema'] };

/** The environment's options as createTokenmeter takes them: every one optional, each as a user may write it. */
export type PlainOptions = { [K in keyof Table as Table[K]['scope'] extends 'meter' ? K : never]?: z.input<Table[K]['schema']> };

/** The options of the given scopes checked: defaults filled in, units resolved, each under its one name. */
export type Resolved<S extends Scope> = { [K in keyof Table as Table[K]['scope'] extends S ? K : never]: z.output<Table[K]['schema']> };

/** The schemas of the options of the given scopes, in the table's order. */
export function shapeOf<S extends Scope>(...scopes: S[]): ShapeOf<S> {
  const entries = Object.entries(OPTIONS).filter(([, o]) => (scopes as Scope[]).includes(o.scope));
  return Object.fromEntries(entries.map(([name, o]) => [name, o.schema])) as ShapeOf<S>;
}
