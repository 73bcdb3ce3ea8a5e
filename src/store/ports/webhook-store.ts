/**
 * The webhook port, for the admin API's webhook routes and the delivery worker: endpoints, each one's queue of
 * deliveries in order, their attempts, and the lease that lets one process at a time deliver to an endpoint.
 */
import type { Delivery, DeliveryAttempt, WebhookEndpoint } from '../records/events';

export interface NewDelivery {
  eventId: string;
  type: Delivery['type'];
  body: string;
}

/** An attempt's outcome: delivered, tried again at `retryAtMs`, or given up (failed). */
export type AttemptOutcome = { kind: 'delivered' } | { kind: 'retry'; retryAtMs: number } | { kind: 'failed' };

export interface WebhookStore {
  createEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  listEndpoints(): Promise<WebhookEndpoint[]>;
  /** False when there is no such endpoint. Its queue and history go with it. */
  deleteEndpoint(id: string): Promise<boolean>;
  /**
   * Queues an event for an endpoint, at the end of its queue; at most once per (endpoint, event id), so an event
   * handed on twice (after a crash between queueing and dropping it from the outbox) is queued once.
   */
  enqueue(endpointId: string, delivery: NewDelivery): Promise<void>;
  /** The endpoint's oldest pending delivery (its queue's head), due or not; undefined when the queue is empty. */
  head(endpointId: string): Promise<Delivery | undefined>;
  /** Records an attempt; a delivered or failed delivery leaves the queue and joins the history. */
  recordAttempt(deliveryId: string, attempt: DeliveryAttempt, outcome: AttemptOutcome): Promise<void>;
  /** The endpoint's deliveries, pending and ended, newest first. */
  listDeliveries(endpointId: string, limit: number): Promise<Delivery[]>;
  getDelivery(deliveryId: string): Promise<Delivery | undefined>;
  /** Queues an ended delivery again, due now, at the end of its endpoint's queue. False when unknown or pending. */
  redeliver(deliveryId: string): Promise<boolean>;
  /** Takes or extends the endpoint's delivery lease for `owner`; false when another owner holds it. */
  lease(endpointId: string, owner: string, ms: number): Promise<boolean>;
  unlease(endpointId: string, owner: string): Promise<void>;
}
