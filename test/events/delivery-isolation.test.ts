/**
 * Endpoints delivered independently, on both stores with a running worker: a receiver that holds every connection
 * and one that refuses (500, or nothing listening) never delay a healthy one, which has every event while the held
 * attempt is still waiting; a receiver that comes back gets its backlog in order.
 */
import { randomBytes } from 'node:crypto';
import { DeliveryWorker } from '../../src/events/delivery-worker';
import { generateKey } from '../../src/http/keys';
import { createLogger } from '../../src/observability/logger';
import type { EventType } from '../../src/store/records/events';
import { eventually } from '../helpers/eventually';
import { claimPort } from '../helpers/ports';
import { newAccount, storeKinds } from '../helpers/stores';
import { startEvents, type EventsUnderTest } from '../helpers/webhook-stores';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const logger = createLogger('silent');
/** Longer than the test: a held attempt never ends on its own while it runs. */
const TIMEOUT_MS = 30_000;

describe.each(storeKinds)('endpoints delivered independently (%s store)', (kind) => {
  let events: EventsUnderTest;
  let held: WebhookReceiver;
  let refusing: WebhookReceiver;
  let worker: DeliveryWorker;

  beforeEach(async () => {
    events = await startEvents(kind);
    held = await startReceiver();
    refusing = await startReceiver();
  });

  afterEach(async () => {
    // Closing the receivers ends the held attempt, so the worker stops at once.
    await held.close();
    await refusing.close();
    await events.receiver.close();
    await worker.stop();
    await events.close();
  });

  async function endpoint(url: string, types: EventType[] = ['key.created']): Promise<string> {
    const id = `we_${randomBytes(4).toString('hex')}`;
    await events.webhooks.createEndpoint({ id, url, types, secret: 'whsec_t', created: 1 });
    return id;
  }

  async function keys(n: number): Promise<string[]> {
    const accountId = await newAccount(events.s.store);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const k = generateKey();
      const made = await events.s.store.createKey(accountId, { hash: k.hash, prefix: k.prefix, name: 'k', expiresAt: null, models: null });
      if (made.kind !== 'created') throw new Error(made.kind);
      ids.push(made.key.id);
    }
    return ids;
  }

  const keyIds = (r: WebhookReceiver) => r.received.map((x) => x.event.data.key_id);

  test('a held, a 500 and a refused receiver do not delay a healthy one; the 500 one, back, gets its backlog in order', async () => {
    let holding = 0;
    held.hold = () => (holding += 1);
    refusing.answer = 500;
    await endpoint(held.url);
    await endpoint(refusing.url);
    await endpoint(`http://127.0.0.1:${await claimPort()}/nothing-listens`);
    await endpoint(events.receiver.url);
    worker = new DeliveryWorker({
      outbox: events.s.store,
      webhooks: events.webhooks,
      logger,
      lowBalance: { tokens: 0, percent: 20 },
      timeoutMs: TIMEOUT_MS,
      firstRetryMs: 1,
      pollMs: 50,
    });
    worker.start();
    const first = await keys(3);
    await eventually(async () => expect(keyIds(events.receiver)).toEqual(first));
    const more = await keys(3); // the held attempt is still under way, and the others keep failing
    await eventually(async () => expect(keyIds(events.receiver)).toEqual([...first, ...more]));
    // Every event reached the healthy receiver while the held endpoint's first attempt was still waiting.
    expect(holding).toBe(1);
    expect(keyIds(held)).toEqual([]);

    refusing.answer = 200;
    await eventually(async () => expect(keyIds(refusing)).toEqual([...first, ...more]), 10_000);
  });
});
