/**
 * The delivery thread's own code (started by delivery-thread.ts): the delivery worker on a Redis connection of the
 * thread's own, its gauges sent to the process's registry as messages, until told to stop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../observability/logger';
import { openDeliveryStores } from '../store/create-store';
import type { DeliveryThreadData, DeliveryThreadMessage } from './delivery-thread';
import { DeliveryWorker, type EndpointGauge, type EndpointGauges } from './delivery-worker';

const data = workerData as DeliveryThreadData;
const port = parentPort!;
const logger = createLogger(data.logLevel as Parameters<typeof createLogger>[0]);
const stores = openDeliveryStores(data.store, logger);

const gauge = (name: keyof EndpointGauges): EndpointGauge => ({
  set: ({ endpoint }, value) => port.postMessage({ gauge: name, endpoint, value } satisfies DeliveryThreadMessage),
  remove: ({ endpoint }) => port.postMessage({ gauge: name, endpoint, value: null } satisfies DeliveryThreadMessage),
});

const worker = new DeliveryWorker({
  outbox: stores.outbox,
  webhooks: stores.webhooks,
  metrics: { webhookBacklog: gauge('webhookBacklog'), webhookOldestSeconds: gauge('webhookOldestSeconds') },
  logger,
  lowBalance: data.lowBalance,
  timeoutMs: data.timeoutMs,
  packageExpiringDays: data.packageExpiringDays,
});
worker.start();

port.on('message', (m: unknown) => {
  if (m !== 'stop') return;
  void worker
    .stop()
    .then(() => stores.close())
    .finally(() => port.postMessage({ stopped: true } satisfies DeliveryThreadMessage));
});
