/**
 * The composition root: every service a Tokenmeter runs on, built once from the resolved config and the host's parts.
 * The library, the server and the tests' proxy all come through here; a test changes what it must through overrides
 * (a models file, the console's directory, the meter's retry step), never by wiring services of its own.
 */
import { join } from 'node:path';
import { buildCatalog, ModelsFile, type Catalog } from './catalog/models';
import { ConfigError, type MeterConfig, type MeterParts } from './config/options';
import { Journal } from './metering/journal';
import { Meter } from './metering/metering';
import { loadTokenizer } from './metering/estimate';
import { TokenCounter } from './metering/prompt-counter';
import { createLogger, type Logger } from './observability/logger';
import { Metrics } from './observability/metrics';
import { Pools } from './upstreams/pools';
import { stripeSettings } from './products/stripe-checkout';
import type { MeterDeps } from './meter-deps';
import { createStores, type Stores } from './store/create-store';
import { instrumentStore, storeTimer, timedModelLimits } from './store/instrumented-store';
import { MemoryCommerceStore } from './store/memory/memory-commerce-store';
import { MemoryModelLimits } from './store/memory/memory-model-limits';
import { MemorySessionStore } from './store/memory/memory-session-store';
import type { MeteringStore } from './store/ports/metering-store';
import type { EventOutbox } from './store/ports/event-outbox';
import type { ResponseOwners } from './store/ports/response-owners';
import type { WebhookBackend } from './store/ports/webhook-store';
import { isWholeStore, type ServingStore } from './store/ports/store';
import { RedisStore } from './store/redis/redis-store';
import { MemoryResponseOwners } from './store/memory/memory-response-owners';
import { MemoryWebhookStore } from './store/memory/memory-webhook-store';
import { startDelivery } from './events/start-delivery';
import { openLedgerArchive } from './ledger-archive/open-ledger-archive';

/** What a caller may put in place of what the config would build; each unset one is built as production builds it. */
export interface ServiceOverrides {
  /** The models file to serve from (and reload), instead of the config's or the inline models. */
  modelsFile?: ModelsFile;
  /** Beside a given store: which account owns each stored response. Default: in memory. */
  responses?: ResponseOwners;
  /** Beside a given store: webhook endpoints and their deliveries. Default: in memory. */
  webhooks?: WebhookBackend;
  /** The built browser console. Default: dist/web beside the compiled code. */
  webDir?: string;
  /** Node's process metrics in the registry. Default true (tests leave them out: many registries in one process). */
  processMetrics?: boolean;
  /** The meter's first retry delay for a settlement the store refused, in ms. Default 500. */
  retryBaseMs?: number;
}

/** The services, started; `release` stops and closes what was opened beyond the meter, pools and counter. */
export interface Services {
  deps: MeterDeps;
  release(): Promise<void>;
}

export async function buildServices(config: MeterConfig, parts: MeterParts, overrides: ServiceOverrides = {}): Promise<Services> {
  const logger = parts.logger ?? createLogger(config.logLevel);
  const serving = parts.store !== undefined && !isWholeStore(parts.store);
  if (serving) refuseManagingOptions(config, parts, logger);
  // Only self-service registrations get the trial: said once at start rather than leaving the operator to wonder.
  if (config.signupTokens !== undefined && config.accountRegistration !== 'open')
    logger.warn('SIGNUP_TOKENS is set but ACCOUNT_REGISTRATION is closed: no account gets the trial package');
  const catalogs = catalogSource(config, parts, overrides.modelsFile);
  const metrics = new Metrics({ perKey: config.metricsPerKey, processMetrics: overrides.processMetrics });
  // The journal only matters for a store that can be unreachable; the memory store lives and dies with the process.
  const remote = parts.store ? parts.store.kind !== 'memory' : parts.redis !== undefined || config.redisUrl !== undefined;
  const journal = remote ? openJournal(config.journalFile) : undefined;
  const opened = openStore(config, parts, overrides, logger);
  const ledger = openLedgerArchive(config, opened.stores, logger, metrics);
  const store = ledger.wrap(instrumentStore(opened.stores.store, metrics));
  // Beside a serving store, model limits are counted in this process (like the console's stores beside a host's own).
  const modelLimits = isWholeStore(store)
    ? store
    : timedModelLimits(new MemoryModelLimits({ limitWindowMs: config.rateLimitWindowSeconds * 1000 }), storeTimer(metrics));
  const leaseMs = config.reservationLeaseSeconds * 1000;
  const retryBaseMs = overrides.retryBaseMs;
  const meter = new Meter({ store, modelLimits, leaseMs, logger, metrics, journal, onSettle: parts.onSettle, retryBaseMs });
  // The tokenizer's tables load now, here and in the count worker, not on the first request that needs a count.
  loadTokenizer();
  const pools = new Pools({
    maxFreeSockets: config.upstreamMaxFreeSockets,
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    timeoutMs: config.upstreamTimeoutMs,
    logger,
    registry: metrics.registry,
  });
  const counter = new TokenCounter();
  counter.warm();
  const deps: MeterDeps = {
    config,
    store,
    sessions: opened.stores.sessions,
    commerce: opened.stores.commerce,
    responses: ledger.owners(opened.stores.responses),
    webhookStore: opened.stores.webhooks,
    catalog: catalogs.current,
    meter,
    counter,
    pools,
    logger,
    metrics,
    reloadModels: catalogs.reload,
    lifecycle: { draining: false },
    authenticate: parts.authenticate,
    ledgerStatus: () => ledger.status(),
    // `npm run build` writes the browser console beside the compiled code (dist/web).
    webDir: overrides.webDir ?? join(__dirname, 'web'),
  };
  // Give Redis a moment to connect so the first requests are not refused; go on anyway (failing closed) if it is down.
  const answers = await storeAnswers(store, 3_000);
  if (!answers) logger.warn('store not reachable at start; requests get 503 until it is');
  const backend = opened.stores.store;
  const upgrading = backend instanceof RedisStore ? await upgradeStore(backend, answers, logger) : undefined;
  // Webhook delivery runs beside the requests, never in them; beside a host's serving store there are no events.
  const delivery = opened.stores.delivery;
  const outbox = delivery.outbox;
  const worker =
    isWholeStore(store) && outbox !== undefined
      ? startDelivery(config, parts, { store, delivery: { outbox, webhooks: delivery.webhooks }, metrics, logger })
      : undefined;
  ledger.start();
  return {
    deps,
    release: async () => {
      await worker?.stop();
      await ledger.close();
      clearInterval(upgrading);
      journal?.close();
      await opened.close?.();
    },
  };
}

/**
 * Beside a host's serving store the routes that manage accounts, keys and money are off: an option only they use is
 * refused rather than silently ignored.
 */
function refuseManagingOptions(config: MeterConfig, parts: MeterParts, logger: Logger): void {
  const given = [
    config.adminToken && 'adminToken',
    parts.sessions && 'sessions',
    parts.commerce && 'commerce',
    stripeSettings(config) && 'stripeSecretKey',
  ];
  const option = given.find((name) => typeof name === 'string');
  if (option !== undefined) {
    const detail = 'needs a whole Store: the store given implements only the metering and key-lookup ports';
    throw new ConfigError(`invalid tokenmeter option ${option}: ${detail}`, option, detail);
  }
  logger.info('a serving store: the admin API, the console and the webhooks are off; model limits are counted in this process');
}

/**
 * Moves a Redis store written before accounts to the account layout (a no-op once done; see redis-migration.ts).
 * Keys from before accounts are refused (never served unmetered) until it has run: while the store is away, it is
 * retried until it does; the returned timer is that retry.
 */
async function upgradeStore(store: RedisStore, reachable: boolean, logger: Logger): Promise<NodeJS.Timeout | undefined> {
  const migrate = async () => {
    const migrated = await store.migrate();
    if (migrated > 0)
      logger.info({ keys: migrated }, 'store upgraded: each key from before accounts is now the only key of its own account');
  };
  if (reachable) {
    await migrate();
    return undefined;
  }
  const upgrading = setInterval(() => {
    migrate().then(
      () => clearInterval(upgrading),
      () => {},
    );
  }, 2_000);
  upgrading.unref();
  return upgrading;
}

/** The models: a models file given as an override, given inline (fixed), or the config's models file (reloadable). */
function catalogSource(
  config: MeterConfig,
  parts: MeterParts,
  given: ModelsFile | undefined,
): { current: () => Catalog; reload?: () => Promise<number> } {
  if (given !== undefined) return { current: given.current, reload: given.reload };
  const defaults = {
    upstreamUrl: config.upstreamUrl,
    upstreamApiKey: config.upstreamApiKey,
    drainSeconds: config.upstreamDrainSeconds,
    env: parts.env ?? process.env,
  };
  if (parts.models !== undefined) {
    const content = Array.isArray(parts.models) ? { models: parts.models } : parts.models;
    const catalog = buildCatalog(content, defaults, 'models option');
    return { current: () => catalog };
  }
  const file = new ModelsFile(config.modelsFile, defaults);
  return { current: file.current, reload: file.reload };
}

/**
 * The stores to use, and how to close what the factory opened (nothing of the host's). The console's session and
 * commerce stores share the metering store's Redis connection; beside a host's own `store`, they are the host's
 * `sessions`/`commerce` or, failing those, in memory (one process only).
 */
function openStore(
  config: MeterConfig,
  parts: MeterParts,
  overrides: ServiceOverrides,
  logger: Logger,
): {
  stores: Omit<Stores, 'store' | 'delivery'> & { store: ServingStore; delivery: { webhooks: WebhookBackend; outbox?: EventOutbox } };
  close?: () => Promise<void>;
} {
  if (parts.store) {
    const sessions = parts.sessions ?? new MemorySessionStore();
    const commerce = parts.commerce ?? new MemoryCommerceStore();
    const webhooks = overrides.webhooks ?? new MemoryWebhookStore();
    // A host's whole store is its own outbox: the worker reads it as the requests write it.
    const outbox = isWholeStore(parts.store) ? parts.store : undefined;
    const responses = overrides.responses ?? new MemoryResponseOwners();
    return { stores: { store: parts.store, sessions, commerce, responses, webhooks, delivery: { webhooks, outbox } } };
  }
  const { close, ...stores } = createStores(config, logger, parts);
  return { stores, close };
}

function openJournal(file: string): Journal {
  try {
    return new Journal(file);
  } catch (err) {
    const detail = `cannot open ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    throw new ConfigError(`invalid tokenmeter option journalFile: ${detail}`, 'journalFile', detail);
  }
}

async function storeAnswers(store: MeteringStore, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await store.ping();
      return true;
    } catch {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
