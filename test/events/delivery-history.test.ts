/**
 * An endpoint's delivery history, on both stores: every pending delivery is kept however long the backlog, and of
 * the ended ones the last DELIVERY_HISTORY; trimming happens as deliveries end, so queueing costs the same whatever
 * the backlog (a backlog of thousands once made each queueing scan all of it, stalling Redis).
 */
import { DELIVERY_HISTORY } from '../../src/store/records/events';
import { storeKinds } from '../helpers/stores';
import { startEvents, type EventsUnderTest } from '../helpers/webhook-stores';

describe.each(storeKinds)('delivery history (%s store)', (kind) => {
  let events: EventsUnderTest;

  beforeEach(async () => {
    events = await startEvents(kind);
  });
  afterEach(() => events.close());

  test(`keeps every pending delivery and the last ${DELIVERY_HISTORY} ended ones`, async () => {
    const { webhooks } = events;
    await webhooks.createEndpoint({ id: 'we_h', url: events.receiver.url, types: ['key.created'], secret: 's', created: 1 });
    const total = DELIVERY_HISTORY + 200;
    const ids = Array.from({ length: total }, (_, i) => `evt_${i}`);
    await webhooks.enqueue(
      'we_h',
      ids.map((eventId) => ({ eventId, type: 'key.created' as const, body: '{}' })),
    );
    expect((await webhooks.backlog('we_h')).pending).toBe(total); // past the history's size, nothing pending dropped

    const ended = DELIVERY_HISTORY + 100;
    const heads = await webhooks.heads('we_h', ended);
    expect(heads.map((d) => d.eventId)).toEqual(ids.slice(0, ended));
    await webhooks.recordAttempt(
      { at: 1, status: 200, error: null },
      heads.map((d) => ({ deliveryId: d.id, outcome: { kind: 'delivered' as const } })),
    );

    const kept = await webhooks.listDeliveries('we_h', 10 * total);
    expect(kept.filter((d) => d.status === 'pending').map((d) => d.eventId)).toEqual(ids.slice(ended).reverse());
    expect(kept.filter((d) => d.status === 'delivered').map((d) => d.eventId)).toEqual(ids.slice(100, ended).reverse());
    expect(await webhooks.getDelivery(heads[0].id)).toBeUndefined();
    // A dropped delivery's event may be queued again; a kept one's may not.
    await webhooks.enqueue('we_h', [
      { eventId: 'evt_0', type: 'key.created', body: '{}' },
      { eventId: `evt_${ended - 1}`, type: 'key.created', body: '{}' },
    ]);
    expect((await webhooks.backlog('we_h')).pending).toBe(total - ended + 1);
  });
});
