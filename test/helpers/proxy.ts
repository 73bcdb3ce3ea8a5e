/** Builds and runs a tokenmeter app on a free port, with a test upstream and a real store, as tests need it. */
import type { WebhookStore } from '../../src/store/ports/webhook-store';
import { MemoryWebhookStore } from '../../src/store/memory/memory-webhook-store';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config/config';
import { createLogger, type Logger } from '../../src/observability/logger';
import { Meter } from '../../src/metering/metering';
import { TokenCounter } from '../../src/metering/prompt-counter';
import { Metrics } from '../../src/observability/metrics';
import { instrumentStore } from '../../src/store/instrumented-store';
import { buildCatalog, type ModelEntry, type ModelsFile } from '../../src/catalog/models';
import type { Store } from '../../src/store/ports/store';
import type { CommerceStore } from '../../src/store/ports/commerce-store';
import { MemoryCommerceStore } from '../../src/store/memory/memory-commerce-store';
import { MemorySessionStore } from '../../src/store/memory/memory-session-store';
import type { SessionStore } from '../../src/store/ports/session-store';
import { MemoryResponseOwners } from '../../src/store/memory/memory-response-owners';
import type { ResponseOwners } from '../../src/store/ports/response-owners';
import { Pools } from '../../src/upstreams/pools';
import { assemble } from '../../src/tokenmeter';

export const MODEL = 'acme/chat-small';
/** The browser console as global-setup built it. */
export const WEB_DIR = join(__dirname, '..', '..', 'dist', 'web');
export const UPSTREAM_MODEL = 'Acme/Chat-Small-Instruct';

export interface ProxyUnderTest {
  url: string;
  /** Base URL for SDKs: `${url}/v1`. */
  baseURL: string;
  server: Server;
  meter: Meter;
  metrics: Metrics;
  config: Config;
  /** Every log line the proxy wrote. */
  logs: string[];
  close(): Promise<void>;
}

export async function startProxy(options: {
  store: Store;
  /** Default: in memory. */
  sessions?: SessionStore;
  commerce?: CommerceStore;
  /** Default: in memory. */
  webhooks?: WebhookStore;
  upstreamUrl: string;
  models?: Partial<ModelEntry>[];
  /** Who owns each stored response. Default: in memory. */
  responses?: ResponseOwners;
  /** Upstreams for the models file's `upstreams` list. */
  upstreams?: ({
    name: string;
    url?: string;
    api_key_env?: string;
    stream_include_usage?: boolean;
    output_cap_fields?: Record<string, string[]>;
    drain_seconds?: number;
  } & Record<string, unknown>)[];
  env?: Record<string, string>;
  /** A reloadable models file instead of `models`. */
  modelsFile?: ModelsFile;
}): Promise<ProxyUnderTest> {
  const config = loadConfig({ UPSTREAM_URL: options.upstreamUrl, LOG_LEVEL: 'info', RESERVATION_LEASE_SECONDS: '60', ...options.env });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const logger: Logger = createLogger(config.logLevel, sink);
  const models = (options.models ?? [{}]).map((m, i) => ({
    id: i === 0 ? MODEL : `acme/model-${i}`,
    upstream_model: i === 0 ? UPSTREAM_MODEL : undefined,
    context_length: 8192,
    max_output_tokens: 1024,
    ...m,
  }));
  const catalog = buildCatalog(
    { models, upstreams: options.upstreams ?? [] },
    {
      upstreamUrl: config.upstreamUrl,
      upstreamApiKey: config.upstreamApiKey,
      drainSeconds: config.upstreamDrainSeconds,
      env: options.env ?? {},
    },
  );
  const metrics = new Metrics({ perKey: config.metricsPerKey, processMetrics: false });
  const store = instrumentStore(options.store, metrics);
  const meter = new Meter({ store, modelLimits: store, leaseMs: config.reservationLeaseSeconds * 1000, logger, metrics, retryBaseMs: 50 });
  const pools = new Pools({
    maxFreeSockets: config.upstreamMaxFreeSockets,
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    timeoutMs: config.upstreamTimeoutMs,
    logger,
    registry: metrics.registry,
  });
  const counter = new TokenCounter();
  const tokenmeter = assemble(
    {
      config,
      store,
      sessions: options.sessions ?? new MemorySessionStore(),
      commerce: options.commerce ?? new MemoryCommerceStore(),
      responses: options.responses ?? new MemoryResponseOwners(),
      webhookStore: options.webhooks ?? new MemoryWebhookStore(),
      catalog: options.modelsFile?.current ?? (() => catalog),
      reloadModels: options.modelsFile?.reload,
      meter,
      counter,
      pools,
      logger,
      metrics,
      lifecycle: { draining: false },
      webDir: WEB_DIR,
    },
    async () => {},
  );
  const app = createApp(tokenmeter, {
    logger,
    metrics: config.metricsPort === undefined,
    trustProxy: config.trustProxy,
    bodyTimeoutMs: config.bodyTimeoutSeconds * 1000,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    server,
    meter,
    metrics,
    config,
    logs,
    close: async () => {
      await meter.drain(5_000);
      meter.stop();
      pools.close();
      await counter.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits until every settlement reached the store. */
export async function settled(proxy: ProxyUnderTest): Promise<void> {
  const ok = await proxy.meter.drain(5_000);
  if (!ok) throw new Error('settlements did not drain');
}

export function chatBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }], ...over };
}
