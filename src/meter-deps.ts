/** The one shape of what the routers are built from: build-services.ts makes it, the routers read it. */
import type { Authenticate } from './config/option-types';
import type { MeterConfig } from './config/options';
import type { Catalog } from './catalog/models';
import type { LedgerStatus } from './ledger-archive/ledger-status';
import type { Meter } from './metering/metering';
import type { TokenCounter } from './metering/prompt-counter';
import type { Logger } from './observability/logger';
import type { Metrics } from './observability/metrics';
import type { CommerceStore } from './store/ports/commerce-store';
import type { ResponseOwners } from './store/ports/response-owners';
import type { SessionStore } from './store/ports/session-store';
import type { ServingStore } from './store/ports/store';
import type { WebhookStore } from './store/ports/webhook-store';
import type { Pools } from './upstreams/pools';

/** The services the routers share: built once, passed in. */
export interface MeterDeps {
  config: MeterConfig;
  /**
   * A whole Store, or a host's ServingStore (metering and key lookup alone): beside that, the admin API, the console
   * and the webhooks, which manage accounts, keys and money, pass every request on.
   */
  store: ServingStore;
  /** The console's sessions and failed-login windows. */
  sessions: SessionStore;
  /** The product center's products and redemption codes. */
  commerce: CommerceStore;
  /** Which account owns each stored response (the Responses API). */
  responses: ResponseOwners;
  /** Webhook endpoints and their deliveries (the operator's routes; delivery is the worker's). */
  webhookStore: WebhookStore;
  /** The current catalog; a function so the models file can be reloaded. */
  catalog: () => Catalog;
  meter: Meter;
  /** Counts long prompts off the event loop (closed with the app). */
  counter: TokenCounter;
  /** The upstream pools: balanced, health-checked, retried and failed over (src/upstreams/). */
  pools: Pools;
  logger: Logger;
  metrics: Metrics;
  /** Reloads the models file (the admin reload route); resolves to the number of models. */
  reloadModels?: () => Promise<number>;
  /** Set `draining` on shutdown: /readyz turns 503 and new completions are refused. */
  lifecycle: { draining: boolean };
  /** The built browser console (index.html and assets/); unset or missing: its pages say it is not built. */
  webDir?: string;
  /** The host's authentication instead of tokenmeter's bearer keys. */
  authenticate?: Authenticate;
  /** The ledger archive's state (GET /admin/ledger); unset: the route answers as without an archive. */
  ledgerStatus?: () => Promise<LedgerStatus>;
}
