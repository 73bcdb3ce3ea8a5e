/**
 * CloudEvents batch mode, on both stores with a running worker: an endpoint that asks for batches receives 1,000
 * usage.settled events as signed `application/cloudevents-batch+json` arrays of at most its batch size, each event once.
 */
import { randomBytes } from 'node:crypto';
import { DeliveryWorker } from '../../src/events/delivery-worker';
import { CLOUDEVENTS_BATCH } from '../../src/events/post-deliveries';
import { verifyWebhook } from '../../src/events/signature';
import { createLogger } from '../../src/observability/logger';
import { eventually } from '../helpers/eventually';
import { newAccount, storeKinds } from '../helpers/stores';
import { startEvents, type EventsUnderTest } from '../helpers/webhook-stores';

const EVENTS = 1_000;
const BATCH = 100;

describe.each(storeKinds)('usage.settled in batches (%s store)', (kind) => {
  let events: EventsUnderTest;
  let worker: DeliveryWorker;

  beforeEach(async () => {
    events = await startEvents(kind);
  });

  afterEach(async () => {
    await worker.stop();
    await events.close();
  });

  test(`${EVENTS} usage.settled events reach a batching endpoint, each once, in POSTs of at most ${BATCH}`, async () => {
    const id = `we_${randomBytes(4).toString('hex')}`;
    await events.webhooks.createEndpoint({
      id,
      url: events.receiver.url,
      types: ['usage.settled'],
      secret: 'whsec_b',
      created: 1,
      batch: BATCH,
    });
    worker = new DeliveryWorker({
      outbox: events.s.store,
      webhooks: events.webhooks,
      logger: createLogger('silent'),
      lowBalance: { tokens: 0, percent: 20 },
      pollMs: 50,
    });
    await worker.tick(); // has read the endpoint: usage.settled is written from here on
    worker.start();
    const store = events.s.store;
    const accountId = await newAccount(store);
    await store.grantPackage(accountId, { tokens: 1_000_000, expiresAt: null });
    const ids = Array.from({ length: EVENTS }, (_, i) => `req_${i}`);
    for (let i = 0; i < EVENTS; i += 100) await Promise.all(ids.slice(i, i + 100).map((r) => store.settle(settlement(accountId, r))));

    const delivered = () => events.receiver.received.flatMap((r) => (Array.isArray(r.event) ? r.event : [r.event]) as { id: string }[]);
    await eventually(async () => expect(delivered()).toHaveLength(EVENTS), 30_000);
    expect(new Set(delivered().map((e) => e.id))).toEqual(new Set(ids));
    for (const r of events.receiver.received) {
      expect(r.contentType).toBe(CLOUDEVENTS_BATCH);
      expect((r.event as unknown as unknown[]).length).toBeLessThanOrEqual(BATCH);
      expect(verifyWebhook(r.body, r.signature, 'whsec_b').valid).toBe(true);
    }
    expect(events.receiver.received.length).toBeLessThan(EVENTS / 2);
  });
});

function settlement(accountId: string, requestId: string) {
  return {
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
  };
}
