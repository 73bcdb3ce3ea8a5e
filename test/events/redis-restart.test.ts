/**
 * Events survive a Redis restart: on a redis-server of its own with an fsync'd append-only file, events waiting in an
 * account's outbox and events queued for an endpoint (their first attempt failed) are delivered after the server is
 * killed and started again, each once, with the id it had, signed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { DeliveryWorker } from '../../src/events/delivery-worker';
import { verifyWebhook } from '../../src/events/signature';
import { createLogger } from '../../src/observability/logger';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import { RedisWebhookStore } from '../../src/store/redis/redis-webhook-store';
import { eventually } from '../helpers/eventually';
import { startRedisServer, type RedisServer } from '../helpers/redis-server';
import { keyWithTokens } from '../helpers/stores';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(60_000);

describe('webhook events across a Redis restart', () => {
  let dir: string;
  let redis: RedisServer;
  let receiver: WebhookReceiver;
  const clients: Redis[] = [];

  const durable = () => ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tm-aof-'));
    redis = await startRedisServer(durable());
    receiver = await startReceiver();
  });

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await receiver.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('events written before the restart are delivered after it, each once, same id, valid signature', async () => {
    const client = () => {
      const c = new Redis(redis.url, { ...redisClientOptions(2000), enableOfflineQueue: true });
      c.on('error', () => {}); // refused while the server is down: reconnects on its own
      clients.push(c);
      return c;
    };
    const store = new RedisStore(client(), { prefix: 'rs:' });
    const webhooks = new RedisWebhookStore(client(), { prefix: 'rs:' });
    const secret = 'whsec_restart';
    await webhooks.createEndpoint({ id: 'we_restart', url: receiver.url, types: ['*'], secret, created: 1 });
    const worker = new DeliveryWorker({
      outbox: store,
      webhooks,
      logger: createLogger('silent'),
      lowBalance: { tokens: 0, percent: 20 },
      firstRetryMs: 1,
    });
    await worker.tick(); // learns what the endpoint wants

    // Queued: handed on to the endpoint's queue, its first attempt refused.
    receiver.answer = 500;
    await keyWithTokens(store, 100);
    await worker.tick();
    const queued = (await webhooks.listDeliveries('we_restart', 100)).map((d) => d.eventId);
    expect(queued).toHaveLength(3); // account.created, key.created, package.granted
    // Still in the outbox: written, not yet handed on.
    const { accountId } = await keyWithTokens(store, 200);
    const inOutbox = (await store.readEvents(accountId, 100)).map((e) => e.id);
    expect(inOutbox).toHaveLength(3);
    expect(receiver.received).toEqual([]);

    await redis.stop(); // SIGKILL: only what the append-only file holds survives
    redis = await startRedisServer(durable(), redis.port);
    receiver.answer = 200;

    await eventually(async () => {
      await worker.tick().catch(() => undefined); // the first ticks may meet the clients still reconnecting
      expect(receiver.received).toHaveLength(6);
    }, 30_000);
    await worker.tick(); // nothing more comes
    const ids = receiver.received.map((r) => r.event.id);
    expect(ids.sort()).toEqual([...queued, ...inOutbox].sort());
    for (const r of receiver.received) expect(verifyWebhook(r.body, r.signature, secret).valid).toBe(true);
    expect((await webhooks.listDeliveries('we_restart', 100)).map((d) => d.status)).toEqual(Array(6).fill('delivered'));
  });
});
