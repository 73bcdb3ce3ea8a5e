/**
 * When an endpoint starts receiving, on both stores with running delivery workers: an event caused 1 ms after the
 * endpoint was created is delivered, whichever process causes it; usage.settled's gate follows the endpoints at once
 * in memory, and on Redis by pub/sub on another process that would not look again for a minute.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { DeliveryWorker } from '../../src/events/delivery-worker';
import { generateKey } from '../../src/http/keys';
import { createLogger } from '../../src/observability/logger';
import type { Store } from '../../src/store/ports/store';
import { ENDPOINT_CHANGE_WAIT_MS, type WebhookBackend } from '../../src/store/ports/webhook-store';
import type { EventType } from '../../src/store/records/events';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import { RedisWebhookStore } from '../../src/store/redis/redis-webhook-store';
import { eventually } from '../helpers/eventually';
import { itOnRedis, newAccount, storeKinds, testRedisUrl } from '../helpers/stores';
import { startEvents, type EventsUnderTest } from '../helpers/webhook-stores';

const logger = createLogger('silent');
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createKey(store: Store, accountId: string): Promise<string> {
  const k = generateKey();
  const made = await store.createKey(accountId, { hash: k.hash, prefix: k.prefix, name: 'k', expiresAt: null, models: null });
  if (made.kind !== 'created') throw new Error(made.kind);
  return made.key.id;
}

function settle(store: Store, accountId: string, requestId: string) {
  return store.settle({
    accountId,
    keyId: null,
    requestId,
    model: 'm',
    promptTokens: 1,
    completionTokens: 1,
    chargedTokens: 2,
    estimated: false,
    stream: false,
    status: 200,
  });
}

describe.each(storeKinds)('an endpoint starts receiving at once (%s store)', (kind) => {
  let events: EventsUnderTest;
  /** The second process's view: on Redis its own store, webhook store and connections; in memory the same. */
  let other: { store: Store; webhooks: WebhookBackend; close(): Promise<void> };
  const workers: DeliveryWorker[] = [];

  beforeEach(async () => {
    events = await startEvents(kind);
    if (kind === 'redis') {
      const client = new Redis(testRedisUrl(), { ...redisClientOptions(2000), enableOfflineQueue: true });
      const store = new RedisStore(client, { prefix: events.s.prefix });
      other = { store, webhooks: new RedisWebhookStore(client, { prefix: events.s.prefix }), close: () => store.close() };
    } else other = { store: events.s.store, webhooks: events.webhooks, close: async () => undefined };
  });

  afterEach(async () => {
    await events.receiver.close();
    for (const w of workers.splice(0)) await w.stop();
    await other.close();
    await events.close();
  });

  /** A running worker; `pollMs` long: it learns of new endpoints only when told. */
  function running(store: Store, webhooks: WebhookBackend, pollMs: number): DeliveryWorker {
    const w = new DeliveryWorker({ outbox: store, webhooks, logger, lowBalance: { tokens: 0, percent: 20 }, timeoutMs: 2_000, pollMs });
    w.start();
    workers.push(w);
    return w;
  }

  async function endpoint(types: EventType[]): Promise<void> {
    const id = `we_${randomBytes(4).toString('hex')}`;
    await events.webhooks.createEndpoint({ id, url: events.receiver.url, types, secret: 'whsec_t', created: 1 });
  }

  const received = (type: string) => events.receiver.received.filter((r) => r.event.type === type);

  test('key.created caused 1 ms after the endpoint was created, on the other process, is delivered', async () => {
    running(events.s.store, events.webhooks, 50);
    running(other.store, other.webhooks, 60_000);
    await pause(100); // both have run their first round: neither knew of any endpoint
    const accountId = await newAccount(other.store);
    await endpoint(['key.created']);
    await pause(1);
    const keys = [
      await createKey(other.store, accountId),
      await createKey(other.store, accountId),
      await createKey(other.store, accountId),
    ];
    await eventually(async () => expect(received('key.created').map((r) => r.event.data.key_id)).toEqual(keys));
  });

  test('usage.settled of the first settlement after the endpoint was created, on a process that does not look at the endpoints again for a minute, is delivered', async () => {
    running(events.s.store, events.webhooks, 50);
    running(other.store, other.webhooks, 60_000);
    await pause(100);
    const accountId = await newAccount(other.store);
    await endpoint(['usage.settled']);
    // The creation was answered once the other process had applied it (pub/sub, answered back).
    await settle(other.store, accountId, 'req_1');
    await eventually(async () => expect(received('usage.settled').map((r) => r.event.id)).toEqual(['req_1']), 10_000);
  });

  test("balance.low caused at once after the deployment's first endpoint, on the other process, is delivered", async () => {
    running(events.s.store, events.webhooks, 50);
    running(other.store, other.webhooks, 60_000);
    await pause(100); // both have read the endpoints: none, so neither writes any event
    const accountId = await newAccount(other.store);
    await other.store.grantPackage(accountId, { tokens: 1, expiresAt: null });
    await endpoint(['balance.low']);
    await settle(other.store, accountId, 'req_low');
    await eventually(async () => expect(received('balance.low').map((r) => r.event.data.account_id)).toEqual([accountId]), 10_000);
  });

  // One process in memory: nothing to wait for.
  itOnRedis(kind)('a process that stopped answering does not hold the creation longer than the bound', async () => {
    running(events.s.store, events.webhooks, 50);
    // A watcher that is told but never applies: the creation is answered after ENDPOINT_CHANGE_WAIT_MS all the same.
    const stop = other.webhooks.watchEndpoints(() => new Promise<void>(() => undefined));
    try {
      await pause(100);
      const started = Date.now();
      await endpoint(['key.created']);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(ENDPOINT_CHANGE_WAIT_MS - 50);
      expect(took).toBeLessThan(ENDPOINT_CHANGE_WAIT_MS + 2_000);
    } finally {
      await stop();
    }
  });
});
