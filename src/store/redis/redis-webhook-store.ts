/** The shared webhook store on Redis (or Redis Cluster): endpoints, queues, attempts and leases (lua/webhooks/). */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { newId } from '../ids';
import {
  ENDPOINT_CHANGE_WAIT_MS,
  type DeliveryQueues,
  type NewDelivery,
  type RecordedOutcome,
  type WebhookStore,
} from '../ports/webhook-store';
import {
  DELIVERY_HISTORY,
  type Delivery,
  type DeliveryAttempt,
  type DeliveryStatus,
  type EndpointBacklog,
  type WebhookEndpoint,
} from '../records/events';
import { luaScript } from './lua-scripts';
import { defineScripts } from './define-scripts';

export interface RedisWebhookStoreOptions {
  /** Prefix of every key we write. Default `tm:`. */
  prefix?: string;
}

export class RedisWebhookStore implements WebhookStore, DeliveryQueues {
  private readonly base: string;
  private readonly run;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisWebhookStoreOptions = {},
  ) {
    this.base = `${options.prefix ?? 'tm:'}{wh}:`;
    this.run = defineScripts(redis, {
      tmWhEnqueue: luaScript('webhooks/enqueue.lua'),
      tmWhRecord: luaScript('webhooks/record-attempt.lua'),
      tmWhRedeliver: luaScript('webhooks/redeliver.lua'),
      tmWhDelete: luaScript('webhooks/delete-endpoint.lua'),
      tmWhLease: luaScript('webhooks/lease.lua'),
      tmWhUnlease: luaScript('webhooks/unlease.lua'),
    });
  }

  async createEndpoint(e: WebhookEndpoint): Promise<void> {
    await this.redis.hset(`${this.base}eps`, e.id, JSON.stringify(e));
    await this.changed();
  }

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    const all = Object.values(await this.redis.hgetall(`${this.base}eps`)).map((v) => JSON.parse(v) as WebhookEndpoint);
    return all.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    const deleted = Number(await this.run.tmWhDelete([`${this.base}eps`], [this.base, id])) === 1;
    if (deleted) await this.changed();
    return deleted;
  }

  /**
   * Tells every watching process, this one included, and waits until each has applied the change (each answers on
   * `applied` once its onChange resolved), at most ENDPOINT_CHANGE_WAIT_MS: an event caused after the change was
   * answered is written by whichever process causes it. A process not subscribed at the moment (reconnecting) is not
   * waited for: it refreshes when it subscribes again, and every second.
   */
  private async changed(): Promise<void> {
    const change = newId('we');
    const sub = this.redis.duplicate();
    sub.on('error', () => {});
    let timer: NodeJS.Timeout | undefined;
    try {
      let acks = 0;
      let expected = Infinity;
      let allApplied!: () => void;
      const applied = new Promise<void>((resolve) => (allApplied = resolve));
      sub.on('message', (_channel: string, message: string) => {
        if (message === change && ++acks >= expected) allApplied();
      });
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ENDPOINT_CHANGE_WAIT_MS)));
      const subscribed = async () => {
        if (sub.status !== 'ready') await new Promise((resolve) => sub.once('ready', resolve));
        await sub.subscribe(this.appliedChannel);
        expected = await this.publishChange(change);
        if (acks >= expected) allApplied();
        await applied;
      };
      await Promise.race([subscribed(), deadline]);
    } catch {
      // Redis unreachable: the watchers' own refresh (at reconnection, and every second) makes up for it.
    } finally {
      clearTimeout(timer);
      sub.disconnect();
    }
  }

  /**
   * Publishes the change; the number of processes listening. On a cluster PUBLISH counts only the subscribers of the
   * node that ran it (the message reaches every node's), so there every node is asked for its count.
   */
  private async publishChange(change: string): Promise<number> {
    const received = Number(await this.redis.publish(this.channel, change));
    if (!this.redis.isCluster) return received;
    const counts = await Promise.all(
      (this.redis as Cluster).nodes('all').map((node) => node.pubsub('NUMSUB', this.channel) as Promise<[string, number]>),
    );
    return counts.reduce((sum, [, n]) => sum + Number(n), 0);
  }

  private get channel(): string {
    return `${this.base}changed`;
  }

  private get appliedChannel(): string {
    return `${this.base}applied`;
  }

  watchEndpoints(onChange: () => Promise<void>): () => Promise<void> {
    // A connection of its own: one that subscribes can send nothing else.
    const sub = this.redis.duplicate();
    sub.on('error', () => {}); // the store's own connection reports outages
    // Applied, then answered on the store's own connection (a subscribed one can only listen).
    sub.on('message', (_channel: string, change: string) => {
      onChange()
        .then(() => this.redis.publish(this.appliedChannel, change))
        .catch(() => undefined);
    });
    // Subscribed at each (re)connection, and told: a change may have been missed while away.
    sub.on('ready', () => {
      sub.subscribe(this.channel).then(
        () => onChange().catch(() => undefined),
        () => {},
      );
    });
    return async () => {
      sub.disconnect();
    };
  }

  async enqueue(endpointId: string, ds: readonly NewDelivery[]): Promise<void> {
    if (ds.length === 0) return;
    const events = ds.map((d) => ({ id: d.eventId, delivery: newId('dlv'), type: d.type, body: d.body }));
    const input = { base: this.base, endpoint: endpointId, created: Math.floor(Date.now() / 1000), events };
    await this.run.tmWhEnqueue([`${this.base}eps`, `${this.base}seq`], [JSON.stringify(input)]);
  }

  async heads(endpointId: string, limit: number): Promise<Delivery[]> {
    const ids = await this.redis.zrange(`${this.base}q:${endpointId}`, 0, limit - 1);
    const all = await Promise.all(ids.map((id) => this.getDelivery(id)));
    return all.filter((d): d is Delivery => d !== undefined);
  }

  async backlog(endpointId: string): Promise<EndpointBacklog> {
    const q = `${this.base}q:${endpointId}`;
    const [pending, [oldest], lastError] = await Promise.all([
      this.redis.zcard(q),
      this.redis.zrange(q, 0, 0),
      this.redis.get(`${this.base}le:${endpointId}`),
    ]);
    const created = oldest === undefined ? null : await this.redis.hget(`${this.base}d:${oldest}`, 'created');
    return {
      pending,
      oldestCreated: created === null ? null : Number(created),
      lastError: lastError === null ? null : (JSON.parse(lastError) as DeliveryAttempt),
    };
  }

  async recordAttempt(attempt: DeliveryAttempt, outcomes: readonly RecordedOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    const deliveries = outcomes.map(({ deliveryId, outcome }) => ({
      id: deliveryId,
      outcome: outcome.kind,
      retry_at: outcome.kind === 'retry' ? outcome.retryAtMs : 0,
    }));
    const input = { base: this.base, attempt: JSON.stringify(attempt), failed: attempt.error !== null, keep: DELIVERY_HISTORY, deliveries };
    await this.run.tmWhRecord([], [JSON.stringify(input)]);
  }

  async listDeliveries(endpointId: string, limit: number): Promise<Delivery[]> {
    const ids = await this.redis.zrevrange(`${this.base}h:${endpointId}`, 0, limit - 1);
    const all = await Promise.all(ids.map((id) => this.getDelivery(id)));
    return all.filter((d): d is Delivery => d !== undefined);
  }

  async getDelivery(id: string): Promise<Delivery | undefined> {
    const [h, attempts] = await Promise.all([this.redis.hgetall(`${this.base}d:${id}`), this.redis.lrange(`${this.base}a:${id}`, 0, -1)]);
    if (h.endpoint === undefined) return undefined;
    return {
      id,
      endpointId: h.endpoint,
      eventId: h.event,
      type: h.type as Delivery['type'],
      body: h.body,
      status: h.status as DeliveryStatus,
      created: Number(h.created),
      nextAttemptMs: Number(h.next),
      attempts: attempts.map((a) => JSON.parse(a) as DeliveryAttempt),
    };
  }

  async redeliver(deliveryId: string): Promise<boolean> {
    return Number(await this.run.tmWhRedeliver([`${this.base}seq`], [this.base, deliveryId])) === 1;
  }

  async lease(endpointId: string, owner: string, ms: number): Promise<boolean> {
    return Number(await this.run.tmWhLease([`${this.base}l:${endpointId}`], [owner, ms])) === 1;
  }

  async unlease(endpointId: string, owner: string): Promise<void> {
    await this.run.tmWhUnlease([`${this.base}l:${endpointId}`], [owner]);
  }
}
