/** Builds and runs a tokenmeter app on a free port, with a test upstream and a real store, as tests need it. */
import { eventually } from './eventually';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config/config';
import { createLogger } from '../../src/observability/logger';
import type { Meter } from '../../src/metering/metering';
import type { Metrics } from '../../src/observability/metrics';
import type { ModelEntry, ModelsFile } from '../../src/catalog/models';
import type { Store } from '../../src/store/ports/store';
import type { CommerceStore } from '../../src/store/ports/commerce-store';
import type { SessionStore } from '../../src/store/ports/session-store';
import type { ResponseOwners } from '../../src/store/ports/response-owners';
import type { WebhookBackend } from '../../src/store/ports/webhook-store';
import { buildServices } from '../../src/build-services';
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
  webhooks?: WebhookBackend;
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
  // Each proxy journals to a file of its own, as each production instance does (JOURNAL_FILE, one per instance).
  const dir = mkdtempSync(join(tmpdir(), 'tm-proxy-'));
  const config = loadConfig({
    UPSTREAM_URL: options.upstreamUrl,
    LOG_LEVEL: 'info',
    RESERVATION_LEASE_SECONDS: '60',
    JOURNAL_FILE: join(dir, 'settlements.journal'),
    ...options.env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const models = (options.models ?? [{}]).map((m, i) => ({
    id: i === 0 ? MODEL : `acme/model-${i}`,
    upstream_model: i === 0 ? UPSTREAM_MODEL : undefined,
    context_length: 8192,
    max_output_tokens: 1024,
    ...m,
  }));
  // The one wiring users run (buildServices); the test only says what it puts in place of the config's parts.
  const services = await buildServices(
    config,
    {
      store: options.store,
      sessions: options.sessions,
      commerce: options.commerce,
      models: { models, upstreams: options.upstreams ?? [] },
      env: options.env ?? {},
      logger,
    },
    {
      modelsFile: options.modelsFile,
      responses: options.responses,
      webhooks: options.webhooks,
      webDir: WEB_DIR,
      processMetrics: false,
      retryBaseMs: 50,
    },
  );
  const tokenmeter = assemble(services.deps, services.release);
  const { meter, metrics } = services.deps;
  const app = createApp(tokenmeter, {
    logger,
    metrics: config.metricsPort === undefined,
    trustProxy: config.trustProxy,
    bodyTimeoutMs: config.bodyTimeoutSeconds * 1000,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
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
      await tokenmeter.close({ timeoutMs: 5_000 });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
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

/** Waits until the proxy's server holds no client connection: a client's hang-up has reached it. */
export async function hangUpSeen(proxy: ProxyUnderTest): Promise<void> {
  await eventually(
    async () => {
      const open = await new Promise<number>((resolve, reject) =>
        proxy.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
      if (open > 0) throw new Error(`${open} client connection(s) still open`);
    },
    10_000,
    'the proxy to see the client hang up',
  );
}
