/** A store under test with a webhook store beside it (on the same Redis and prefix) and a receiver, as the events tests use. */
import Redis from 'ioredis';
import { MemoryWebhookStore } from '../../src/store/memory/memory-webhook-store';
import type { WebhookBackend } from '../../src/store/ports/webhook-store';
import { RedisWebhookStore } from '../../src/store/redis/redis-webhook-store';
import { makeStore, testRedisUrl, type StoreKind, type StoreUnderTest } from './stores';
import { startReceiver, type WebhookReceiver } from './webhook-receiver';

export interface EventsUnderTest {
  s: StoreUnderTest;
  webhooks: WebhookBackend;
  receiver: WebhookReceiver;
  close(): Promise<void>;
}

export async function startEvents(kind: StoreKind, options: { now?: () => number } = {}): Promise<EventsUnderTest> {
  const s = await makeStore(kind, options);
  const client = kind === 'redis' ? new Redis(testRedisUrl()) : undefined;
  const webhooks = client ? new RedisWebhookStore(client, { prefix: s.prefix }) : new MemoryWebhookStore();
  const receiver = await startReceiver();
  return {
    s,
    webhooks,
    receiver,
    close: async () => {
      await receiver.close();
      await s.close();
      client?.disconnect();
    },
  };
}
