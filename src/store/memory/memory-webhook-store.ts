/** The webhook store of a single process: endpoints, queues and attempts in memory (nothing survives a restart). */
import { newId } from '../ids';
import type { AttemptOutcome, DeliveryQueues, NewDelivery, RecordedOutcome, WebhookStore } from '../ports/webhook-store';
import { DELIVERY_HISTORY, type Delivery, type DeliveryAttempt, type EndpointBacklog, type WebhookEndpoint } from '../records/events';

interface EndpointState {
  endpoint: WebhookEndpoint;
  /** Pending delivery ids, oldest first. */
  queue: string[];
  /** Every kept delivery id, pending and ended, in queue order (a Set: dropping one is O(1)). */
  history: Set<string>;
  /** The kept ended delivery ids, oldest first: what is trimmed (pending ones are always kept). */
  ended: string[];
  /** event id -> delivery id */
  seen: Map<string, string>;
  lease?: { owner: string; until: number };
  lastError?: DeliveryAttempt;
}

export class MemoryWebhookStore implements WebhookStore, DeliveryQueues {
  private readonly endpoints = new Map<string, EndpointState>();
  private readonly deliveries = new Map<string, Delivery>();
  private readonly watchers = new Set<() => Promise<void>>();

  constructor(private readonly now: () => number = Date.now) {}

  async createEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    this.endpoints.set(endpoint.id, { endpoint: { ...endpoint }, queue: [], history: new Set(), ended: [], seen: new Map() });
    await this.changed();
  }

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    return [...this.endpoints.values()].map((e) => ({ ...e.endpoint })).sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    const state = this.endpoints.get(id);
    if (!state) return false;
    for (const d of state.history) this.deliveries.delete(d);
    this.endpoints.delete(id);
    await this.changed();
    return true;
  }

  watchEndpoints(onChange: () => Promise<void>): () => Promise<void> {
    const watcher = () => onChange();
    this.watchers.add(watcher);
    return async () => {
      this.watchers.delete(watcher);
    };
  }

  /** Every watcher applies the change before it is answered. */
  private async changed(): Promise<void> {
    await Promise.all([...this.watchers].map((w) => w().catch(() => undefined)));
  }

  async enqueue(endpointId: string, ds: readonly NewDelivery[]): Promise<void> {
    for (const d of ds) this.enqueueOne(endpointId, d);
  }

  private enqueueOne(endpointId: string, d: NewDelivery): void {
    const state = this.endpoints.get(endpointId);
    if (!state || state.seen.has(d.eventId)) return;
    const delivery: Delivery = {
      id: newId('dlv'),
      endpointId,
      ...d,
      status: 'pending',
      created: Math.floor(this.now() / 1000),
      nextAttemptMs: this.now(),
      attempts: [],
    };
    this.deliveries.set(delivery.id, delivery);
    state.seen.set(d.eventId, delivery.id);
    state.queue.push(delivery.id);
    state.history.add(delivery.id);
  }

  async heads(endpointId: string, limit: number): Promise<Delivery[]> {
    const ids = this.endpoints.get(endpointId)?.queue.slice(0, limit) ?? [];
    return ids.map((id) => this.copy(this.deliveries.get(id)) as Delivery);
  }

  async backlog(endpointId: string): Promise<EndpointBacklog> {
    const state = this.endpoints.get(endpointId);
    const oldest = state?.queue[0] === undefined ? undefined : this.deliveries.get(state.queue[0]);
    return {
      pending: state?.queue.length ?? 0,
      oldestCreated: oldest?.created ?? null,
      lastError: state?.lastError ? { ...state.lastError } : null,
    };
  }

  async recordAttempt(attempt: DeliveryAttempt, outcomes: readonly RecordedOutcome[]): Promise<void> {
    for (const { deliveryId, outcome } of outcomes) this.recordOne(deliveryId, attempt, outcome);
  }

  private recordOne(deliveryId: string, attempt: DeliveryAttempt, outcome: AttemptOutcome): void {
    const d = this.deliveries.get(deliveryId);
    const state = d && this.endpoints.get(d.endpointId);
    if (!d || !state || d.status !== 'pending') return;
    d.attempts.push({ ...attempt });
    if (attempt.error !== null) state.lastError = { ...attempt };
    if (outcome.kind === 'retry') {
      d.nextAttemptMs = outcome.retryAtMs;
      return;
    }
    d.status = outcome.kind;
    d.nextAttemptMs = 0;
    // Usually the head: taken off without a pass over a long queue.
    if (state.queue[0] === deliveryId) state.queue.shift();
    else state.queue = state.queue.filter((id) => id !== deliveryId);
    this.ended(state, deliveryId);
  }

  async listDeliveries(endpointId: string, limit: number): Promise<Delivery[]> {
    const ids = [...(this.endpoints.get(endpointId)?.history ?? [])];
    return ids
      .slice(-limit)
      .reverse()
      .map((id) => this.copy(this.deliveries.get(id)) as Delivery);
  }

  async getDelivery(deliveryId: string): Promise<Delivery | undefined> {
    return this.copy(this.deliveries.get(deliveryId));
  }

  async redeliver(deliveryId: string): Promise<boolean> {
    const d = this.deliveries.get(deliveryId);
    const state = d && this.endpoints.get(d.endpointId);
    if (!d || !state || d.status === 'pending') return false;
    d.status = 'pending';
    d.nextAttemptMs = this.now();
    state.queue.push(d.id);
    state.ended = state.ended.filter((id) => id !== d.id);
    // Moved to the end of the history, as its new place in the queue.
    state.history.delete(d.id);
    state.history.add(d.id);
    return true;
  }

  async lease(endpointId: string, owner: string, ms: number): Promise<boolean> {
    const state = this.endpoints.get(endpointId);
    if (!state) return false;
    const now = this.now();
    if (state.lease && state.lease.owner !== owner && state.lease.until > now) return false;
    state.lease = { owner, until: now + ms };
    return true;
  }

  async unlease(endpointId: string, owner: string): Promise<void> {
    const state = this.endpoints.get(endpointId);
    if (state?.lease?.owner === owner) state.lease = undefined;
  }

  /** Keeps an ended delivery, dropping the oldest ended ones past DELIVERY_HISTORY (their events may be queued again). */
  private ended(state: EndpointState, id: string): void {
    state.ended.push(id);
    while (state.ended.length > DELIVERY_HISTORY) {
      const old = state.ended.shift() as string;
      state.history.delete(old);
      const d = this.deliveries.get(old);
      if (d) state.seen.delete(d.eventId);
      this.deliveries.delete(old);
    }
  }

  private copy(d: Delivery | undefined): Delivery | undefined {
    return d && { ...d, attempts: d.attempts.map((a) => ({ ...a })) };
  }
}
