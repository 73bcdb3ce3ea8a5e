/** The webhook API's objects (admin API and CLI): endpoints without their secret, deliveries with attempts. */
import { z } from 'zod';
import {
  EVENT_TYPES,
  eventBody,
  usageSettledData,
  type Delivery,
  type EndpointBacklog,
  type WebhookEndpoint,
} from '../store/records/events';
import type { UsageObject } from './usage';

/** The most usage.settled events one batched POST carries. */
export const MAX_BATCH_SIZE = 1000;

/** `POST /admin/webhooks`. */
export const createWebhookRequest = z.strictObject({
  url: z
    .string({ error: 'must be a URL' })
    .url('must be a URL')
    .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL'),
  events: z
    .array(z.enum(['*', ...EVENT_TYPES], { error: `must be * or one of ${EVENT_TYPES.join(', ')}` }), {
      error: 'must be an array of event types',
    })
    .min(1, 'must name at least one event type')
    .default(['*']),
  /** Up to this many usage.settled events per POST, as a CloudEvents batch; absent: one event per POST. */
  batch_size: z
    .number({ error: `must be a whole number from 1 to ${MAX_BATCH_SIZE}` })
    .int(`must be a whole number from 1 to ${MAX_BATCH_SIZE}`)
    .min(1, `must be a whole number from 1 to ${MAX_BATCH_SIZE}`)
    .max(MAX_BATCH_SIZE, `must be a whole number from 1 to ${MAX_BATCH_SIZE}`)
    .optional(),
});

export type CreateWebhookRequest = z.input<typeof createWebhookRequest>;

/** `PUT /admin/accounts/:id/low-balance`: the account's balance.low threshold; null for the default. */
export const lowBalanceRequest = z.strictObject({
  tokens: z
    .number({ error: 'must be a whole number of tokens, or null' })
    .int('must be a whole number of tokens')
    .nonnegative()
    .max(Number.MAX_SAFE_INTEGER)
    .nullable(),
});

export interface WebhookEndpointObject {
  id: string;
  url: string;
  events: string[];
  /** usage.settled events per POST (a CloudEvents batch); null: one per POST. */
  batch_size: number | null;
  created: number;
}

/** `GET /admin/webhooks/:id`: the endpoint and what waits for it. */
export interface WebhookEndpointDetailObject extends WebhookEndpointObject {
  backlog: {
    /** Deliveries queued and not yet delivered or given up. */
    pending: number;
    /** Seconds since the oldest of them was queued; 0 with none. */
    oldest_age_seconds: number;
    /** The last failed attempt (kept after later successes); null if none failed. */
    last_error: { at: number; status: number | null; error: string | null } | null;
  };
}

/** At creation only: the endpoint with its signing secret, shown this once. */
export interface NewWebhookEndpointObject extends WebhookEndpointObject {
  secret: string;
}

export interface DeliveryObject {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  status: Delivery['status'];
  created: number;
  /** When the next attempt is due (Unix seconds); null once it ended. */
  next_attempt: number | null;
  attempts: { at: number; status: number | null; error: string | null }[];
  /** The event as sent (and signed). */
  event: unknown;
}

export function endpointObject(e: WebhookEndpoint): WebhookEndpointObject {
  return { id: e.id, url: e.url, events: [...e.types], batch_size: e.batch ?? null, created: e.created };
}

export function endpointDetailObject(e: WebhookEndpoint, b: EndpointBacklog, nowSeconds: number): WebhookEndpointDetailObject {
  return {
    ...endpointObject(e),
    backlog: {
      pending: b.pending,
      oldest_age_seconds: b.oldestCreated === null ? 0 : Math.max(0, nowSeconds - b.oldestCreated),
      last_error: b.lastError && { ...b.lastError },
    },
  };
}

export function deliveryObject(d: Delivery): DeliveryObject {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    type: d.type,
    status: d.status,
    created: d.created,
    next_attempt: d.status === 'pending' ? Math.ceil(d.nextAttemptMs / 1000) : null,
    attempts: d.attempts.map((a) => ({ ...a })),
    event: JSON.parse(d.body) as unknown,
  };
}

/** A ledger record as the usage.settled CloudEvent its webhook carried (`tokenmeter usage export --format cloudevents`). */
export function usageCloudEvent(u: UsageObject): string {
  const data = usageSettledData({
    accountId: u.account_id,
    keyId: u.key_id,
    requestId: u.request_id,
    model: u.model,
    endpoint: u.endpoint,
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens,
    cachedTokens: u.cached_tokens,
    reasoningTokens: u.reasoning_tokens,
    toolCalls: u.tool_calls,
    toolTokens: u.tool_tokens,
    chargedTokens: u.charged_tokens,
    estimated: u.estimated,
    stream: u.stream,
    status: u.status,
  });
  return eventBody({ id: u.request_id, type: 'usage.settled', accountId: u.account_id, created: u.created, data, cursor: u.cursor });
}
