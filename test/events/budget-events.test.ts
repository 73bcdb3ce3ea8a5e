/**
 * budget.threshold and budget.exceeded on both stores: written in the reserve and settle steps that count the budget,
 * once per period per key or account, armed again by the next period (the store's clock is the test's, moved across
 * the period's end rather than waited for); and nothing at all when no endpoint wants them.
 */
import { randomBytes } from 'node:crypto';
import { DeliveryWorker } from '../../src/events/delivery-worker';
import { createLogger } from '../../src/observability/logger';
import type { WebhookBackend } from '../../src/store/ports/webhook-store';
import type { EventType } from '../../src/store/records/events';
import type { ReserveResult } from '../../src/store/records/metering';
import { keyWithTokens, newAccount, storeKinds, type StoreUnderTest } from '../helpers/stores';
import type { WebhookReceiver } from '../helpers/webhook-receiver';
import { startEvents, type EventsUnderTest } from '../helpers/webhook-stores';

const logger = createLogger('silent');
const DAY = 86_400;
/** 2025-01-15T12:00:00Z, a Wednesday. */
const NOON = Date.parse('2025-01-15T12:00:00Z');

describe.each(storeKinds)('budget events (%s store)', (kind) => {
  let s: StoreUnderTest;
  let webhooks: WebhookBackend;
  let receiver: WebhookReceiver;
  let events: EventsUnderTest;
  const clock = { ms: NOON };

  beforeEach(async () => {
    clock.ms = NOON;
    events = await startEvents(kind, { now: () => clock.ms });
    ({ s, webhooks, receiver } = events);
  });

  afterEach(() => events.close());

  async function listening(types: EventType[]): Promise<DeliveryWorker> {
    await webhooks.createEndpoint({ id: `we_${randomBytes(4).toString('hex')}`, url: receiver.url, types, secret: 'whsec_t', created: 1 });
    const w = new DeliveryWorker({
      outbox: s.store,
      webhooks,
      logger,
      lowBalance: { tokens: 0, percent: 20 },
      timeoutMs: 2_000,
      firstRetryMs: 1,
    });
    await w.tick(); // learns what the endpoint wants
    return w;
  }

  /** Reserves `tokens` (prompt only) and settles them; the reserve's outcome. */
  async function spend(accountId: string, keyId: string | null, tokens: number): Promise<ReserveResult['kind']> {
    const requestId = `req_${randomBytes(4).toString('hex')}`;
    const r = await s.store.reserve({ accountId, keyId, requestId, model: 'm', fixed: tokens, unit: 0, allowance: 0, leaseMs: 60_000 });
    if (r.kind !== 'reserved') return r.kind;
    await s.store.settle({
      accountId,
      keyId,
      requestId,
      model: 'm',
      promptTokens: tokens,
      completionTokens: 0,
      chargedTokens: tokens,
      estimated: false,
      stream: false,
      status: 200,
    });
    return r.kind;
  }

  const received = () => receiver.received.map((r) => ({ type: r.event.type, data: r.event.data }));

  test("a key's daily budget: threshold at 80 %, exceeded at the first refusal, each once, and again the next day", async () => {
    const w = await listening(['budget.threshold', 'budget.exceeded']);
    const key = await keyWithTokens(s.store, 10_000, { budget: { tokens: 100, period: 'day' } });
    expect(await spend(key.accountId, key.id, 50)).toBe('reserved'); // 50 %
    expect(await spend(key.accountId, key.id, 30)).toBe('reserved'); // 80 %: threshold
    expect(await spend(key.accountId, key.id, 10)).toBe('reserved'); // 90 %: no second threshold
    expect(await spend(key.accountId, key.id, 20)).toBe('budget_exceeded'); // refused: exceeded
    expect(await spend(key.accountId, key.id, 20)).toBe('budget_exceeded'); // refused again: no second event
    clock.ms += DAY * 1000; // the next day: armed again
    expect(await spend(key.accountId, key.id, 100)).toBe('reserved'); // all of it at once: threshold and exceeded
    await w.tick();
    const day = Date.parse('2025-01-15T00:00:00Z') / 1000;
    const data = (spent: number, start: number) => ({
      account_id: key.accountId,
      key_id: key.id,
      level: 'key',
      tokens: 100,
      period: 'day',
      spent,
      period_start: start,
      resets_at: start + DAY,
    });
    expect(received()).toEqual([
      { type: 'budget.threshold', data: data(80, day) },
      { type: 'budget.exceeded', data: data(90, day) },
      { type: 'budget.threshold', data: data(100, day + DAY) },
      { type: 'budget.exceeded', data: data(100, day + DAY) },
    ]);
    expect(new Set(receiver.received.map((r) => r.event.id)).size).toBe(4);
  });

  test("an account's monthly budget, shared by its keys: each event once per month, key_id null", async () => {
    const w = await listening(['budget.threshold', 'budget.exceeded']);
    const accountId = await newAccount(s.store);
    await s.store.updateAccount(accountId, { budget: { tokens: 1000, period: 'month' } });
    const a = await keyWithTokens(s.store, 10_000, { accountId });
    const b = await keyWithTokens(s.store, 0, { accountId });
    expect(await spend(accountId, a.id, 700)).toBe('reserved');
    expect(await spend(accountId, b.id, 150)).toBe('reserved'); // 85 %: threshold
    expect(await spend(accountId, b.id, 150)).toBe('reserved'); // 100 %: exceeded, by a settlement
    expect(await spend(accountId, a.id, 1)).toBe('budget_exceeded'); // no second exceeded
    await w.tick();
    const month = Date.parse('2025-01-01T00:00:00Z') / 1000;
    const resets = Date.parse('2025-02-01T00:00:00Z') / 1000;
    const data = (spent: number) => ({
      account_id: accountId,
      key_id: null,
      level: 'account',
      tokens: 1000,
      period: 'month',
      spent,
      period_start: month,
      resets_at: resets,
    });
    expect(received()).toEqual([
      { type: 'budget.threshold', data: data(850) },
      { type: 'budget.exceeded', data: data(1000) },
    ]);
  });

  test('with no endpoint wanting budget events, those written with their causes are dropped at hand-on, never queued', async () => {
    const w = await listening(['key.revoked']);
    const key = await keyWithTokens(s.store, 10_000, { budget: { tokens: 100, period: 'week' } });
    expect(await spend(key.accountId, key.id, 90)).toBe('reserved');
    expect(await spend(key.accountId, key.id, 20)).toBe('budget_exceeded');
    // Rare events are always written (no process can lag behind a new endpoint), whoever wants them.
    expect((await s.store.readEvents(key.accountId, 10)).map((e) => e.type)).toContain('budget.exceeded');
    await w.tick();
    expect(await s.store.readEvents(key.accountId, 10)).toEqual([]);
    expect(receiver.received).toEqual([]);
    const [endpoint] = await webhooks.listEndpoints();
    expect(await webhooks.listDeliveries(endpoint.id, 10)).toEqual([]);
  });
});
