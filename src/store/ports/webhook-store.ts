/**
 * The webhook ports, one per caller: the admin API's (endpoints, backlog, history) and the delivery worker's (each
 * endpoint's queue in order, attempts, the lease that lets one process at a time deliver to an endpoint).
 */
import type { Delivery, DeliveryAttempt, EndpointBacklog, WebhookEndpoint } from '../records/events';

export interface NewDelivery {
  eventId: string;
  type: Delivery['type'];
  body: string;
}

/** An attempt's outcome: delivered, tried again at `retryAtMs`, or given up (failed). */
export type AttemptOutcome = { kind: 'delivered' } | { kind: 'retry'; retryAtMs: number } | { kind: 'failed' };

export interface RecordedOutcome {
  deliveryId: string;
  outcome: AttemptOutcome;
}

/** The admin API's side: endpoints, what waits for each, the deliveries' history and redelivery by hand. */
export interface WebhookStore {
  createEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  listEndpoints(): Promise<WebhookEndpoint[]>;
  /** False when there is no such endpoint. Its queue and history go with it. */
  deleteEndpoint(id: string): Promise<boolean>;
  /** The endpoint's queue length, its oldest pending delivery's age and its last failed attempt. */
  backlog(endpointId: string): Promise<EndpointBacklog>;
  /** The endpoint's deliveries, pending and ended, newest first. */
  listDeliveries(endpointId: string, limit: number): Promise<Delivery[]>;
  getDelivery(deliveryId: string): Promise<Delivery | undefined>;
  /** Queues an ended delivery again, due now, at the end of its endpoint's queue. False when unknown or pending. */
  redeliver(deliveryId: string): Promise<boolean>;
}

/** The delivery worker's side: the endpoints' queues, their attempts, the leases, and word of endpoint changes. */
export interface DeliveryQueues {
  /**
   * Queues events for an endpoint, in the order given, at the end of its queue, in one step; each at most once per
   * (endpoint, event id), so an event handed on twice (after a crash between queueing and dropping it from the
   * outbox) is queued once.
   */
  enqueue(endpointId: string, deliveries: readonly NewDelivery[]): Promise<void>;
  /** The endpoint's oldest pending deliveries (its queue's head first), due or not, at most `limit`. */
  heads(endpointId: string, limit: number): Promise<Delivery[]>;
  /**
   * Records one attempt (an event's POST, or a batch's) on each of its deliveries, with each one's outcome, in one
   * step; a delivered or failed delivery leaves the queue and joins the history.
   */
  recordAttempt(attempt: DeliveryAttempt, outcomes: readonly RecordedOutcome[]): Promise<void>;
  /** Takes or extends the endpoint's delivery lease for `owner`; false when another owner holds it. */
  lease(endpointId: string, owner: string, ms: number): Promise<boolean>;
  unlease(endpointId: string, owner: string): Promise<void>;
  /**
   * Calls `onChange` after an endpoint is created or deleted: in this process once the change is written, in every
   * other process sharing the store when told (Redis pub/sub, a few ms). `createEndpoint` and `deleteEndpoint` resolve
   * once every watcher's `onChange` has resolved (at most ENDPOINT_CHANGE_WAIT_MS on Redis), so what a process writes
   * follows the change before the change is answered. Returns what stops watching.
   */
  watchEndpoints(onChange: () => Promise<void>): () => Promise<void>;
}

/** Both sides, as each backend implements them over one key layout. */
export type WebhookBackend = WebhookStore & DeliveryQueues;

/**
 * The longest an endpoint's creation or deletion waits for the watching processes to apply it (Redis): a process that
 * is told but does not answer in time (stalled, or its Redis connection slow) applies it at its next re-read instead.
 */
export const ENDPOINT_CHANGE_WAIT_MS = 2_000;
