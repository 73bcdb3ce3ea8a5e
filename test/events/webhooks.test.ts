/**
 * Webhooks end to end on both stores: events written with their causes, handed to the endpoints' queues, delivered
 * signed, in order, retried, to a real HTTP receiver on loopback.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { DeliveryWorker } from '../../src/events/delivery-worker';
import { verifyWebhook } from '../../src/events/signature';
import { createLogger } from '../../src/observability/logger';
import { MemoryWebhookStore } from '../../src/store/memory/memory-webhook-store';
import type { WebhookBackend } from '../../src/store/ports/webhook-store';
import type { EventType } from '../../src/store/records/events';
import type { Settlement } from '../../src/store/records/metering';
import { RedisWebhookStore } from '../../src/store/redis/redis-webhook-store';
import { generateKey } from '../../src/http/keys';
import { makeStore, newAccount, storeKinds, testRedisUrl, type StoreUnderTest } from '../helpers/stores';
import { claimPort } from '../helpers/ports';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const logger = createLogger('silent');

describe.each(storeKinds)('webhooks (%s store)', (kind) => {
  let s: StoreUnderTest;
  let webhooks: WebhookBackend;
  let receiver: WebhookReceiver;
  let client: Redis | undefined;

  beforeEach(async () => {
    s = await makeStore(kind);
    if (kind === 'redis') {
      client = new Redis(testRedisUrl());
      webhooks = new RedisWebhookStore(client, { prefix: s.prefix });
    } else webhooks = new MemoryWebhookStore();
    receiver = await startReceiver();
  });

  afterEach(async () => {
    await receiver.close();
    await s.close();
    client?.disconnect();
  });

  // LOW_BALANCE_TOKENS set (100): the same threshold for every account (low-balance-contract.test.ts pins the rule).
  const worker = (lowBalanceTokens = 100) =>
    new DeliveryWorker({
      outbox: s.store,
      webhooks,
      logger,
      lowBalance: { tokens: lowBalanceTokens, percent: 20 },
      timeoutMs: 2_000,
      firstRetryMs: 1,
    });

  async function endpoint(types: (EventType | '*')[]) {
    const e = { id: `we_${randomBytes(4).toString('hex')}`, url: receiver.url, types, secret: 'whsec_test', created: 1 };
    await webhooks.createEndpoint(e);
    return e;
  }

  const settlement = (
    accountId: string,
    keyId: string | null,
    charged: number,
    requestId = `req_${randomBytes(4).toString('hex')}`,
  ): Settlement => ({
    accountId,
    keyId,
    requestId,
    model: 'm',
    promptTokens: charged - 1,
    completionTokens: 1,
    chargedTokens: charged,
    estimated: false,
    stream: false,
    status: 200,
  });

  async function newKey(accountId: string): Promise<string> {
    const k = generateKey();
    const rec = await s.store.createKey(accountId, { hash: k.hash, prefix: k.prefix, name: 'k', expiresAt: null, models: null });
    if (rec.kind !== 'created') throw new Error(rec.kind);
    return rec.key.id;
  }

  test('each event type reaches the receiver once per cause, signed with the endpoint secret', async () => {
    await endpoint(['*', 'usage.settled']);
    const w = worker(100);
    await w.tick(); // learns what the endpoints want
    const accountId = await newAccount(s.store);
    const keyId = await newKey(accountId);
    await s.store.grantPackage(accountId, { tokens: 150, expiresAt: null });
    await s.store.settle(settlement(accountId, keyId, 60, 'req_1')); // 90 left: below 100
    await s.store.settle(settlement(accountId, keyId, 10, 'req_2')); // still below: no second balance.low
    await s.store.settle(settlement(accountId, keyId, 10, 'req_2')); // a duplicate settle: no event
    await s.store.revokeKey(keyId);
    await s.store.revokeKey(keyId); // revoked already: no second key.revoked
    await s.store.updateAccount(accountId, { status: 'disabled' });
    await s.store.updateAccount(accountId, { status: 'disabled' });
    await w.tick();
    const types = receiver.received.map((r) => r.event.type);
    expect(types).toEqual([
      'account.created',
      'key.created',
      'package.granted',
      'usage.settled',
      'balance.low',
      'usage.settled',
      'key.revoked',
      'account.disabled',
    ]);
    for (const r of receiver.received)
      expect(verifyWebhook(r.body, r.signature, 'whsec_test')).toEqual({ valid: true, timestamp: expect.any(Number) });
    expect(verifyWebhook(receiver.received[0].body, receiver.received[0].signature, 'whsec_other').valid).toBe(false);
    const usage = receiver.received.filter((r) => r.event.type === 'usage.settled').map((r) => r.event);
    expect(usage[0]).toMatchObject({ specversion: '1.0', id: 'req_1', subject: accountId, source: 'tokenmeter' });
    expect(usage[0].data).toMatchObject({ model: 'm', prompt_tokens: 59, completion_tokens: 1, charged_tokens: 60, cached_tokens: 0 });
    expect(receiver.received[4].event.data).toEqual({ account_id: accountId, balance: 90, threshold: 100 });
    expect(new Set(receiver.received.map((r) => r.event.id)).size).toBe(receiver.received.length);
  });

  test('usage.settled names the endpoint the request used (chat for a settlement that names none)', async () => {
    await endpoint(['usage.settled']);
    const w = worker(100);
    await w.tick();
    const accountId = await newAccount(s.store);
    await s.store.grantPackage(accountId, { tokens: 150, expiresAt: null });
    await s.store.settle({ ...settlement(accountId, null, 10, 'req_e'), endpoint: 'embeddings' });
    await s.store.settle(settlement(accountId, null, 10, 'req_c'));
    await w.tick();
    expect(receiver.received.map((r) => r.event.data.endpoint)).toEqual(['embeddings', 'chat']);
  });

  test('balance.low again only after the balance has risen back above the threshold', async () => {
    await endpoint(['balance.low']);
    const w = worker(100);
    await w.tick();
    const accountId = await newAccount(s.store);
    await s.store.grantPackage(accountId, { tokens: 120, expiresAt: null });
    await s.store.settle(settlement(accountId, null, 30)); // 90: low
    await s.store.settle(settlement(accountId, null, 30)); // 60: still low
    await s.store.grantPackage(accountId, { tokens: 100, expiresAt: null }); // 160: re-armed
    await s.store.settle(settlement(accountId, null, 70)); // 90: low again
    expect(await s.store.setLowBalance(accountId, 50)).toBe(true); // its own threshold: 90 is above it
    await s.store.settle(settlement(accountId, null, 50)); // 40: below 50, but still notified from the last crossing
    await w.tick();
    expect(receiver.received.map((r) => r.event.data)).toEqual([
      { account_id: accountId, balance: 90, threshold: 100 },
      { account_id: accountId, balance: 90, threshold: 100 },
    ]);
  });

  test('with no endpoint configured, no event is written at all (webhooks off cost a request nothing)', async () => {
    const w = worker();
    await w.tick();
    const accountId = await newAccount(s.store);
    await s.store.grantPackage(accountId, { tokens: 10, expiresAt: null });
    await s.store.settle(settlement(accountId, null, 20));
    expect(await s.store.readEvents(accountId, 10)).toEqual([]);
    if (s.redis) expect(await s.redis.smembers(`${s.prefix}evacc`)).toEqual([]);
  });

  test('once any endpoint exists the rare events are written whatever it wants, and the hand-on drops what none receives', async () => {
    await endpoint(['key.created']);
    const w = worker();
    await w.tick();
    const accountId = await newAccount(s.store);
    await s.store.grantPackage(accountId, { tokens: 10, expiresAt: null });
    await s.store.settle(settlement(accountId, null, 20));
    expect((await s.store.readEvents(accountId, 10)).map((e) => e.type)).toEqual(['account.created', 'package.granted', 'balance.low']);
    await w.tick();
    expect(await s.store.readEvents(accountId, 10)).toEqual([]);
  });

  test('an endpoint answering 500 is retried, its failed attempts visible, and later events wait behind it in order', async () => {
    const e = await endpoint(['key.created']);
    const accountId = await newAccount(s.store);
    const w = worker();
    await w.tick();
    receiver.answer = 500;
    const first = await newKey(accountId);
    const second = await newKey(accountId);
    await w.tick();
    await w.tick();
    const [head] = (await webhooks.listDeliveries(e.id, 10)).reverse();
    expect(head.status).toBe('pending');
    expect(head.attempts.length).toBeGreaterThanOrEqual(1);
    expect(head.attempts[0]).toMatchObject({ status: 500, error: 'HTTP 500' });
    expect((await webhooks.listDeliveries(e.id, 10))[0].attempts).toEqual([]); // the second waits: order per endpoint
    receiver.answer = 200;
    await new Promise((r) => setTimeout(r, 20)); // past the (1 ms-based) retry time
    await w.tick();
    expect(receiver.received.map((r) => (r.event.data as { key_id: string }).key_id)).toEqual([first, second]);
    expect((await webhooks.listDeliveries(e.id, 10)).map((d) => d.status)).toEqual(['delivered', 'delivered']);
  });

  test('a bad URL is a failed attempt with the reason, and a delivery that ended can be redelivered by hand', async () => {
    const e = {
      id: 'we_bad',
      url: `http://127.0.0.1:${await claimPort()}/nothing-listens`,
      types: ['account.created' as const],
      secret: 's',
      created: 1,
    };
    await webhooks.createEndpoint(e);
    const w = worker();
    await w.tick();
    await newAccount(s.store);
    await w.tick();
    const [d] = await webhooks.listDeliveries(e.id, 10);
    expect(d.attempts[0]).toMatchObject({ status: null, error: 'ECONNREFUSED' });
    expect(await webhooks.redeliver(d.id)).toBe(false); // still pending: nothing to redeliver
    await webhooks.recordAttempt({ at: 1, status: null, error: 'x' }, [{ deliveryId: d.id, outcome: { kind: 'failed' } }]);
    expect(await webhooks.redeliver(d.id)).toBe(true);
    expect((await webhooks.getDelivery(d.id))?.status).toBe('pending');
  });

  test('two workers ticking at once deliver each event once (the endpoint lease), with the same id', async () => {
    await endpoint(['*']);
    const a = worker();
    const b = worker();
    await Promise.all([a.tick(), b.tick()]);
    for (let i = 0; i < 5; i++) await newAccount(s.store);
    await Promise.all([a.tick(), b.tick()]);
    await Promise.all([a.tick(), b.tick()]);
    expect(receiver.received).toHaveLength(5);
    expect(new Set(receiver.received.map((r) => r.event.id)).size).toBe(5);
  });
});
