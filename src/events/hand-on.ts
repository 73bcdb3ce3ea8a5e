/**
 * The hand-on: moves outbox events to the queues of the endpoints that receive them, oldest first across accounts
 * (cursors are the store's time-ordered stream ids), then drops them from the outboxes. Each endpoint's events are
 * queued in one store step, the endpoints' steps sent at once: never one round trip per event.
 */
import { compareCursor } from '../store/ids';
import type { EventOutbox } from '../store/ports/event-outbox';
import type { NewDelivery, WebhookBackend } from '../store/ports/webhook-store';
import { eventBody } from '../store/records/events';
import { receives } from './event-wants';

const BATCH = 100;

/** Hands on every marked account's events (every account's with `sweep`); the ids of the endpoints that got some. */
export async function handOn(outbox: EventOutbox, webhooks: WebhookBackend, sweep: boolean, stopped: () => boolean): Promise<Set<string>> {
  const fed = new Set<string>();
  let accounts = await outbox.eventAccounts(sweep);
  while (accounts.length > 0 && !stopped()) {
    const read = await Promise.all(accounts.map((id) => outbox.readEvents(id, BATCH)));
    // Listed after the read: an endpoint created before any of these events was caused is in the list.
    const endpoints = await webhooks.listEndpoints();
    const events = read.flat().sort((a, b) => compareCursor(a.cursor, b.cursor));
    const queues = new Map<string, NewDelivery[]>(endpoints.map((e) => [e.id, []]));
    for (const event of events) {
      const body = eventBody(event);
      for (const e of endpoints) if (receives(e, event.type)) queues.get(e.id)!.push({ eventId: event.id, type: event.type, body });
    }
    // One step per endpoint, all sent at once. Queued before dropped: a failure in between queues the events again,
    // once (enqueue is once per event id).
    await Promise.all([...queues].map(([id, ds]) => webhooks.enqueue(id, ds)));
    for (const [id, ds] of queues) if (ds.length > 0) fed.add(id);
    await Promise.all(
      accounts.map((id, i) =>
        outbox.dropEvents(
          id,
          read[i].map((e) => e.cursor),
        ),
      ),
    );
    accounts = accounts.filter((_, i) => read[i].length === BATCH);
  }
  return fed;
}
