/**
 * package.expiring and package.expired on both stores: no request causes them, so the delivery worker's sweep writes
 * them, each once per package even with two workers sweeping at once; the store's clock is the test's, moved across
 * the expiry rather than waited for.
 */
import { randomBytes } from 'node:crypto';
import { DeliveryWorker } from '../../src/events/delivery-worker';
import { createLogger } from '../../src/observability/logger';
import type { WebhookBackend } from '../../src/store/ports/webhook-store';
import type { EventType } from '../../src/store/records/events';
import { newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { WebhookReceiver } from '../helpers/webhook-receiver';
import { startEvents, type EventsUnderTest } from '../helpers/webhook-stores';

const logger = createLogger('silent');
const DAY = 86_400;

describe.each(storeKinds)('package expiry events (%s store)', (kind) => {
  let s: StoreUnderTest;
  let webhooks: WebhookBackend;
  let receiver: WebhookReceiver;
  let events: EventsUnderTest;
  /** The store's clock; starts now, as Redis's own expiry checks (grants, settles) use the server's time. */
  const clock = { ms: 0 };

  beforeEach(async () => {
    clock.ms = Date.now();
    events = await startEvents(kind, { now: () => clock.ms });
    ({ s, webhooks, receiver } = events);
  });

  afterEach(() => events.close());

  async function workers(types: EventType[], n: number): Promise<DeliveryWorker[]> {
    await webhooks.createEndpoint({ id: `we_${randomBytes(4).toString('hex')}`, url: receiver.url, types, secret: 'whsec_t', created: 1 });
    const made = Array.from(
      { length: n },
      () =>
        new DeliveryWorker({
          outbox: s.store,
          webhooks,
          logger,
          lowBalance: { tokens: 0, percent: 20 },
          timeoutMs: 2_000,
          packageExpiringDays: 7,
        }),
    );
    for (const w of made) await w.tick(); // learns what the endpoint wants (and sweeps once: nothing yet)
    return made;
  }

  /** Grants a package expiring in `days`; its id and expiry. */
  async function grant(accountId: string, tokens: number, days: number | null): Promise<{ id: string; expiresAt: number }> {
    const expiresAt = days === null ? null : Math.floor(clock.ms / 1000) + days * DAY;
    const g = await s.store.grantPackage(accountId, { tokens, expiresAt });
    if (g.kind !== 'granted') throw new Error(g.kind);
    return { id: g.package.id, expiresAt: expiresAt ?? 0 };
  }

  test('expiring N days before, expired after, each once per package with two workers sweeping at once', async () => {
    const [a, b] = await workers(['package.expiring', 'package.expired'], 2);
    const accountId = await newAccount(s.store);
    const used = await grant(accountId, 50, 2); // used up below: never "expiring", but "expired"
    const soon = await grant(accountId, 100, 3);
    const later = await grant(accountId, 200, 10);
    await grant(accountId, 300, null); // never expires: no event
    await s.store.settle({
      accountId,
      keyId: null,
      requestId: 'req_use',
      model: 'm',
      promptTokens: 60,
      completionTokens: 0,
      chargedTokens: 60, // 50 from `used` (it expires first), 10 from `soon`
      estimated: false,
      stream: false,
      status: 200,
    });
    await Promise.all([a.sweepPackages(), b.sweepPackages()]); // `soon` is within 7 days
    await Promise.all([a.sweepPackages(), b.sweepPackages()]); // nothing more
    clock.ms += 4 * DAY * 1000; // `used` and `soon` have expired; `later` is 6 days away
    await Promise.all([a.sweepPackages(), b.sweepPackages()]);
    await Promise.all([a.sweepPackages(), b.sweepPackages()]);
    await a.tick();
    await b.tick();
    const data = (p: { id: string; expiresAt: number }, tokens: number, remaining: number) => ({
      account_id: accountId,
      package_id: p.id,
      tokens,
      remaining,
      expires_at: p.expiresAt,
    });
    const got = receiver.received.map((r) => ({ type: r.event.type, data: r.event.data }));
    expect(got).toHaveLength(4);
    expect(got[0]).toEqual({ type: 'package.expiring', data: data(soon, 100, 90) });
    expect(got.slice(1)).toEqual(
      expect.arrayContaining([
        { type: 'package.expired', data: data(used, 50, 0) },
        { type: 'package.expired', data: data(soon, 100, 90) },
        { type: 'package.expiring', data: data(later, 200, 200) },
      ]),
    );
    expect(new Set(receiver.received.map((r) => r.event.id)).size).toBe(4);
  });

  test('with no endpoint wanting them, the sweep writes them once and the hand-on drops them, never queued', async () => {
    const [w] = await workers(['balance.low'], 1);
    const accountId = await newAccount(s.store);
    await grant(accountId, 100, 1);
    clock.ms += 2 * DAY * 1000;
    await w.sweepPackages();
    await w.sweepPackages();
    expect((await s.store.readEvents(accountId, 10)).filter((e) => e.type === 'package.expired')).toHaveLength(1);
    await w.tick();
    expect(await s.store.readEvents(accountId, 10)).toEqual([]);
    const [endpoint] = await webhooks.listEndpoints();
    expect(await webhooks.listDeliveries(endpoint.id, 10)).toEqual([]);
    expect(receiver.received).toEqual([]);
  });
});
