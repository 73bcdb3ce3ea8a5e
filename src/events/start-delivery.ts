/**
 * Where the webhooks' delivery runs: in a thread of its own on REDIS_URL when WEBHOOK_DELIVERY_THREAD is true, the
 * requests' event gates staying in the process; else the delivery worker in the process's event loop, gating both
 * its own outbox and the requests' store.
 */
import type { MeterConfig, MeterParts } from '../config/options';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { DeliveryStoreConfig, DeliveryStores } from '../store/create-store';
import type { EventOutbox } from '../store/ports/event-outbox';
import { DeliveryThread } from './delivery-thread';
import { DeliveryWorker } from './delivery-worker';
import { EventGates } from './event-gates';

/** What the delivery runs beside: the requests' store (its events' gates), the delivery's own stores, the process's metrics. */
interface DeliverySetting {
  store: Pick<EventOutbox, 'wantEvents'>;
  delivery: Omit<DeliveryStores, 'close'>;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Starts the webhooks' delivery: in a thread of its own when REDIS_URL is configured and WEBHOOK_DELIVERY_THREAD is
 * true, the requests' event gates staying here; else the worker in this process, gating both stores.
 */
export function startDelivery(config: MeterConfig, parts: MeterParts, s: DeliverySetting): { stop(): Promise<void> } {
  const lowBalance = { tokens: config.lowBalanceTokens, percent: config.lowBalancePercent };
  const timeoutMs = config.webhookTimeoutMs;
  const packageExpiringDays = config.packageExpiringDays;
  const redisUrl = parts.redis === undefined && parts.store === undefined ? config.redisUrl : undefined;
  if (config.webhookDeliveryThread && redisUrl !== undefined) {
    const gates = new EventGates({ webhooks: s.delivery.webhooks, writers: [s.store], lowBalance });
    const store = { ...pickStoreConfig(config), redisUrl };
    const thread = new DeliveryThread({
      data: { store, logLevel: config.logLevel, lowBalance, timeoutMs, packageExpiringDays },
      logger: s.logger,
      metrics: s.metrics,
    });
    gates.start();
    thread.start();
    return { stop: async () => void (await Promise.all([gates.stop(), thread.stop()])) };
  }
  const worker = new DeliveryWorker({
    outbox: s.delivery.outbox,
    webhooks: s.delivery.webhooks,
    // The requests' store writes the events; the delivery's own (the same in memory) sweeps for package expiry.
    writers: [s.store, s.delivery.outbox],
    metrics: s.metrics,
    logger: s.logger,
    lowBalance,
    timeoutMs,
    packageExpiringDays,
  });
  worker.start();
  return worker;
}

const pickStoreConfig = (c: MeterConfig): Omit<DeliveryStoreConfig, 'redisUrl'> => ({
  redisPrefix: c.redisPrefix,
  redisCluster: c.redisCluster,
  storeTimeoutMs: c.storeTimeoutMs,
  rateLimitWindowSeconds: c.rateLimitWindowSeconds,
});
