/** The library's options as its users write them: the typed object createTokenmeter takes, and its hooks' types. */
import type { Request } from 'express';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../observability/logger';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { Settlement } from '../store/records/metering';
import type { SessionStore } from '../store/ports/session-store';
import type { ServingStore, Store } from '../store/ports/store';

/** Who the host says a request is from (see README "Use as middleware"). */
export interface Identity {
  /** The account charged: its balance pays, its ledger records the request. */
  accountId: string;
  /** A key of that account, when the host keys its users' requests: its cap and model list apply too. Default: none. */
  keyId?: string;
}

/** Replaces the bearer-key lookup: resolve to who the request is from, or null for a 401. */
export type Authenticate = (req: Request) => Promise<Identity | null>;

/** A settled request as the store recorded it in the ledger. */
export type SettledRecord = Readonly<Settlement>;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Byte sizes: a number of bytes, or a string like `512kb`, `4mb`. */
export type ByteSize = number | string;

/** What createTokenmeter takes. Every field is optional; each default is the environment variable's. */
export interface TokenmeterOptions {
  /** The upstream's base URL including `/v1`. Default `http://127.0.0.1:8000/v1`. */
  upstreamUrl?: string;
  /** Sent upstream as `Authorization: Bearer`. Default: none. */
  upstreamApiKey?: string;
  /** The models, as the models file's content (its `models:` list, or `{ upstreams, models }`); replaces `modelsFile`. */
  models?: unknown;
  /** The models file (YAML), when `models` is not given. Default `config/models.yaml`. */
  modelsFile?: string;
  /**
   * A store of the host's own (not closed by `close()`). Give at most one of `store`, `redis`, `redisUrl`. A store
   * implementing only the metering and key-lookup ports is a ServingStoreOptions' `store`.
   */
  store?: Store;
  /** An ioredis client (or Cluster) of the host's own for the Redis store (not closed by `close()`). */
  redis?: Redis | Cluster;
  /** `redis://` or `rediss://`: tokenmeter opens (and closes) its own connection. Default: the memory store. */
  redisUrl?: string;
  /** Prefix of every Redis key tokenmeter writes. Default `tm:`. */
  redisPrefix?: string;
  /** `redisUrl` is one node of a Redis Cluster. Default false. */
  redisCluster?: boolean;
  /** With Redis: settlements Redis could not take yet, kept across restarts; one per instance. Default `data/settlements.journal`. */
  journalFile?: string;
  /** Enables `meter.admin` (at least 16 characters). Default: the admin router passes every request on. */
  adminToken?: string;
  /** Largest request body. Default `4mb`. */
  bodyLimit?: ByteSize;
  /** Largest non-streamed upstream response buffered for metering. Default `16mb`. */
  upstreamResponseLimit?: ByteSize;
  /** Time to open a connection upstream. Default 5000. */
  upstreamConnectTimeoutMs?: number;
  /** Longest upstream silence, before its headers or between stream bytes. Default 300000. */
  upstreamTimeoutMs?: number;
  /** Idle keep-alive connections kept per upstream. Default 256. */
  upstreamMaxFreeSockets?: number;
  /** A reservation's lease, renewed every third of it while its request runs. Default 60. */
  reservationLeaseSeconds?: number;
  /** The window of rpm and tpm limits; shorter only for tests and demos. Default 60. */
  rateLimitWindowSeconds?: number;
  /** A Redis command slower than this counts as a store failure. Default 2000. */
  storeTimeoutMs?: number;
  /** The level of tokenmeter's own logger (ignored with `logger`). Default `info`. */
  logLevel?: LogLevel;
  /** A pino logger of the host's own. Default: JSON lines on stdout at `logLevel`. */
  logger?: Logger;
  /** Put request messages in the request log (debugging only). Default false. */
  logPayloads?: boolean;
  /** Also count charged tokens by key id. Default false. */
  metricsPerKey?: boolean;
  /** Where the models file's `api_key_env` variables are read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Replaces the bearer-key lookup with the host's own authentication. Default: tokenmeter API keys. */
  authenticate?: Authenticate;
  /** Called once per settlement the store took (after it did); its errors and slowness never affect a request. */
  onSettle?: (record: SettledRecord) => void | Promise<void>;
  /** The console's sessions and failed-login windows, with `store`. Default: on `redis`/`redisUrl`, else in memory. */
  sessions?: SessionStore;
  /** The product center's products and redemption codes, with `store`. Default: as `sessions`. */
  commerce?: CommerceStore;
  /** `open`: anyone may register an account at `POST /console/api/register`. Default `closed`. */
  accountRegistration?: 'open' | 'closed';
  /** A console session ends after this many hours unused. Default 168. */
  sessionIdleHours?: number;
  /** Failed console logins allowed per account and per client address in each window. Default 10. */
  loginMaxFailures?: number;
  /** The failed-login window, in minutes. Default 15. */
  loginFailureWindowMinutes?: number;
  /** Stripe's secret API key; with `stripeWebhookSecret`, turns on Checkout. Default: none. */
  stripeSecretKey?: string;
  /** The signing secret of the Stripe webhook endpoint (`whsec_…`). Default: none. */
  stripeWebhookSecret?: string;
  /** Where the Stripe client sends API calls (stripe-mock, tests). Default: Stripe itself. */
  stripeApiUrl?: string;
}

/**
 * The options with a host's own store that implements only the metering and key-lookup ports (its accounts and
 * balances live in its own system): the routes that manage accounts, keys and money are then off, so `adminToken`,
 * `sessions`, `commerce` and Stripe's secrets are refused (README, "Use as middleware").
 */
export interface ServingStoreOptions extends Omit<TokenmeterOptions, 'store'> {
  store: ServingStore;
}
