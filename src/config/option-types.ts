/**
 * The library's options as its users write them: the environment's options (typed from the option table) and the
 * objects and functions no variable can carry, typed here by hand; and the hooks' types.
 */
import type { Request } from 'express';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../observability/logger';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { Settlement } from '../store/records/metering';
import type { SessionStore } from '../store/ports/session-store';
import type { ServingStore, Store } from '../store/ports/store';
import type { LOG_LEVELS, PlainOptions } from './option-table';

/** Who the host says a request is from (see docs/library.md). */
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

export type LogLevel = (typeof LOG_LEVELS)[number];

/** Byte sizes: a number of bytes, or a string like `512kb`, `4mb`. */
export type ByteSize = number | string;

/** The options only the library has: services and hooks, passed on as they are. */
export interface LibraryParts {
  /** The models, as the models file's content (its `models:` list, or `{ upstreams, models }`); replaces `modelsFile`. */
  models?: unknown;
  /**
   * A store of the host's own (not closed by `close()`). Give at most one of `store`, `redis`, `redisUrl`. A store
   * implementing only the metering and key-lookup ports is a ServingStoreOptions' `store`.
   */
  store?: Store;
  /** An ioredis client (or Cluster) of the host's own for the Redis store (not closed by `close()`). */
  redis?: Redis | Cluster;
  /** A pino logger of the host's own. Default: JSON lines on stdout at `logLevel`. */
  logger?: Logger;
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
}

/** What createTokenmeter takes. Every field is optional; each default is the environment variable's. */
export type TokenmeterOptions = PlainOptions & LibraryParts;

/**
 * The options with a host's own store that implements only the metering and key-lookup ports (its accounts and
 * balances live in its own system): the routes that manage accounts, keys and money are then off, so `adminToken`,
 * `sessions`, `commerce` and Stripe's secrets are refused (docs/library.md).
 */
export interface ServingStoreOptions extends Omit<TokenmeterOptions, 'store'> {
  store: ServingStore;
}
