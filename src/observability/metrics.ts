/**
 * Prometheus metrics (prom-client), in a registry of the app's own. Label values are bounded: models are catalog
 * ids or "unknown", statuses are HTTP codes, key ids appear only when METRICS_PER_KEY is on.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Settlement } from '../store/records/metering';

/** From milliseconds to ten minutes: LLM requests range from refusals to long generations. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export interface MetricsOptions {
  /** Label charged tokens with the key and account ids too (`tokenmeter_key_charged_tokens_total`). Default false. */
  perKey?: boolean;
  /** Collect Node's default process metrics. Default true. */
  processMetrics?: boolean;
}

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'model' | 'status' | 'stream' | 'endpoint'>;
  readonly tokens: Counter<'model' | 'kind' | 'source' | 'endpoint'>;
  readonly chargedTokens: Counter<'model' | 'endpoint'>;
  readonly keyChargedTokens: Counter<'key_id' | 'account_id' | 'model'> | undefined;
  readonly requestDuration: Histogram<'model' | 'stream' | 'endpoint'>;
  readonly timeToFirstToken: Histogram<'model'>;
  readonly upstreamDuration: Histogram<'model'>;
  readonly upstreamErrors: Counter<'model' | 'kind'>;
  readonly outputOverrun: Counter<'model' | 'endpoint'>;
  readonly refusals: Counter<'reason'>;
  readonly rateLimited: Counter<'level' | 'limit'>;
  readonly activeStreams: Gauge;
  readonly streamDrains: Counter<'outcome'>;
  readonly storeErrors: Counter<'op'>;
  readonly storeDuration: Histogram<'op'>;
  readonly settleBacklog: Gauge;
  readonly webhookBacklog: Gauge;
  readonly webhookOldestSeconds: Gauge;
  /** The ledger archive's backlog (ledger-archive/shipper.ts): records not yet in PostgreSQL, and the oldest's age. */
  readonly ledgerBacklog: Gauge;
  readonly ledgerOldestUnshipped: Gauge;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'tokenmeter_' });
    this.requests = new Counter({
      name: 'tokenmeter_requests_total',
      help: 'Metered requests answered, by model, HTTP status, whether streamed, and endpoint (chat, completions, embeddings, responses).',
      labelNames: ['model', 'status', 'stream', 'endpoint'],
      registers,
    });
    this.tokens = new Counter({
      name: 'tokenmeter_tokens_total',
      help: 'Tokens metered, by model, kind (prompt, completion; cached: of the prompt, reasoning: of the completion), source (upstream-reported or estimated) and endpoint.',
      labelNames: ['model', 'kind', 'source', 'endpoint'],
      registers,
    });
    this.chargedTokens = new Counter({
      name: 'tokenmeter_charged_tokens_total',
      help: 'Tokens charged to balances (after quota weights), by model and endpoint.',
      labelNames: ['model', 'endpoint'],
      registers,
    });
    this.keyChargedTokens = options.perKey
      ? new Counter({
          name: 'tokenmeter_key_charged_tokens_total',
          // A key belongs to one account for good, so the account label adds no series.
          help: 'Tokens charged, by key id (empty for requests without a key), account id and model.',
          labelNames: ['key_id', 'account_id', 'model'],
          registers,
        })
      : undefined;
    this.requestDuration = new Histogram({
      name: 'tokenmeter_request_duration_seconds',
      help: 'Time from request to the end of the response, by model, whether streamed, and endpoint.',
      labelNames: ['model', 'stream', 'endpoint'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.timeToFirstToken = new Histogram({
      name: 'tokenmeter_time_to_first_token_seconds',
      help: 'Time from request to the first streamed byte sent to the client.',
      labelNames: ['model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.upstreamDuration = new Histogram({
      name: 'tokenmeter_upstream_duration_seconds',
      help: "Time from forwarding to the upstream's response headers.",
      labelNames: ['model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.upstreamErrors = new Counter({
      name: 'tokenmeter_upstream_errors_total',
      help: 'Upstream failures by model and kind (connect, timeout, status, mid_stream).',
      labelNames: ['model', 'kind'],
      registers,
    });
    this.outputOverrun = new Counter({
      name: 'tokenmeter_output_overrun_tokens_total',
      help: 'Completion tokens an upstream produced beyond what was reserved (charged as debt), by model and endpoint.',
      labelNames: ['model', 'endpoint'],
      registers,
    });
    this.refusals = new Counter({
      name: 'tokenmeter_refusals_total',
      help: 'Requests refused by the proxy itself, by reason (the error code).',
      labelNames: ['reason'],
      registers,
    });
    this.rateLimited = new Counter({
      name: 'tokenmeter_rate_limited_total',
      help: 'Requests refused by a rate or concurrency limit, by level (key, account, model) and limit (requests, tokens, concurrent).',
      labelNames: ['level', 'limit'],
      registers,
    });
    this.activeStreams = new Gauge({ name: 'tokenmeter_active_streams', help: 'Streams being relayed now.', registers });
    this.streamDrains = new Counter({
      name: 'tokenmeter_stream_drains_total',
      help: 'Streams read on after their client left, by how reading stopped: usage (it came), ended (without usage), broken, bound (UPSTREAM_DRAIN_SECONDS passed).',
      labelNames: ['outcome'],
      registers,
    });
    this.storeErrors = new Counter({
      name: 'tokenmeter_store_errors_total',
      help: 'Store operations that failed (store unreachable or too slow), by operation.',
      labelNames: ['op'],
      registers,
    });
    this.storeDuration = new Histogram({
      name: 'tokenmeter_store_duration_seconds',
      help: 'Store operation latency, by operation.',
      labelNames: ['op'],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.settleBacklog = new Gauge({
      name: 'tokenmeter_settle_backlog',
      help: 'Settlements waiting for the store (retried until it answers).',
      registers,
    });
    // Read from the shared store by each process's delivery worker every round: every replica reports the same queues.
    this.webhookBacklog = new Gauge({
      name: 'tokenmeter_webhook_backlog',
      help: 'Webhook deliveries queued and not yet delivered or given up, by endpoint.',
      labelNames: ['endpoint'],
      registers,
    });
    this.webhookOldestSeconds = new Gauge({
      name: 'tokenmeter_webhook_oldest_seconds',
      help: "Age of the endpoint's oldest undelivered event (0 with none), by endpoint.",
      labelNames: ['endpoint'],
      registers,
    });
    this.ledgerBacklog = new Gauge({
      name: 'tokenmeter_ledger_backlog_records',
      help: 'Ledger records not yet shipped to the PostgreSQL archive (kept in Redis until they are).',
      registers,
    });
    this.ledgerOldestUnshipped = new Gauge({
      name: 'tokenmeter_ledger_oldest_unshipped_seconds',
      help: 'Age of the oldest ledger record not yet shipped to the PostgreSQL archive (0: none).',
      registers,
    });
  }

  /** A settlement the store accepted: tokens by kind and source, charged tokens by model (and key when on). */
  settled(
    s: Pick<
      Settlement,
      | 'accountId'
      | 'keyId'
      | 'model'
      | 'endpoint'
      | 'promptTokens'
      | 'completionTokens'
      | 'cachedTokens'
      | 'reasoningTokens'
      | 'chargedTokens'
      | 'estimated'
    >,
  ): void {
    const source = s.estimated ? 'estimated' : 'upstream';
    const endpoint = s.endpoint ?? 'chat';
    this.tokens.inc({ model: s.model, kind: 'prompt', source, endpoint }, s.promptTokens);
    this.tokens.inc({ model: s.model, kind: 'completion', source, endpoint }, s.completionTokens);
    // Subsets of the two above, counted only when reported: a model that never caches adds no series.
    if (s.cachedTokens) this.tokens.inc({ model: s.model, kind: 'cached', source, endpoint }, s.cachedTokens);
    if (s.reasoningTokens) this.tokens.inc({ model: s.model, kind: 'reasoning', source, endpoint }, s.reasoningTokens);
    this.chargedTokens.inc({ model: s.model, endpoint }, s.chargedTokens);
    this.keyChargedTokens?.inc({ key_id: s.keyId ?? '', account_id: s.accountId, model: s.model }, s.chargedTokens);
  }
}
