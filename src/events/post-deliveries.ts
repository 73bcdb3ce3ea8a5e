/**
 * One delivery attempt: a signed POST of one event, or of a CloudEvents batch of usage.settled events to an endpoint
 * that asked for batches, and its outcome recorded on each delivery it carried (retry time from backoff.ts).
 */
import type { Logger } from '../observability/logger';
import type { WebhookBackend } from '../store/ports/webhook-store';
import type { Delivery, WebhookEndpoint } from '../store/records/events';
import { nextAttemptAt } from './backoff';
import { SIGNATURE_HEADER, signWebhook } from './signature';

/** The CloudEvents batch mode's content type (a JSON array of events). */
export const CLOUDEVENTS_BATCH = 'application/cloudevents-batch+json';

export interface PostOptions {
  webhooks: WebhookBackend;
  logger: Logger;
  timeoutMs: number;
  firstRetryMs: number;
}

/**
 * The first deliveries of `heads` (the endpoint's queue, oldest first) to send in one POST now: the head alone, or
 * with a batching endpoint the due usage.settled events from the head on, up to its batch size. Empty when the head
 * is not due.
 */
export function dueNow(endpoint: WebhookEndpoint, heads: readonly Delivery[], nowMs: number): Delivery[] {
  const [head] = heads;
  if (head === undefined || head.nextAttemptMs > nowMs) return [];
  if (endpoint.batch === undefined || head.type !== 'usage.settled') return [head];
  const run: Delivery[] = [];
  for (const d of heads) {
    if (d.type !== 'usage.settled' || d.nextAttemptMs > nowMs || run.length >= endpoint.batch) break;
    run.push(d);
  }
  return run;
}

/** POSTs the deliveries (one, or a batch) and records the outcome on each in one step; true when the receiver took them (2xx). */
export async function postDeliveries(o: PostOptions, endpoint: WebhookEndpoint, ds: readonly Delivery[]): Promise<boolean> {
  const batch = endpoint.batch !== undefined && ds[0].type === 'usage.settled';
  const body = batch ? `[${ds.map((d) => d.body).join(',')}]` : ds[0].body;
  const at = Math.floor(Date.now() / 1000);
  let status: number | null = null;
  let error: string | null = null;
  try {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': batch ? CLOUDEVENTS_BATCH : 'application/json',
        'user-agent': 'tokenmeter-webhooks',
        [SIGNATURE_HEADER]: signWebhook(endpoint.secret, body, at),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
    status = res.status;
    await res.body?.cancel();
    if (status < 200 || status > 299) error = `HTTP ${status}`;
  } catch (err) {
    error = errorText(err);
  }
  const delivered = error === null;
  const outcomes = ds.map((d) => {
    const retryAt = delivered ? undefined : nextAttemptAt(d.attempts.length + 1, d.created * 1000, Date.now(), o.firstRetryMs);
    const outcome = delivered
      ? { kind: 'delivered' as const }
      : retryAt === undefined
        ? { kind: 'failed' as const }
        : { kind: 'retry' as const, retryAtMs: retryAt };
    return { deliveryId: d.id, outcome };
  });
  await o.webhooks.recordAttempt({ at, status, error }, outcomes);
  if (!delivered) o.logger.warn({ endpoint: endpoint.id, delivery: ds[0].id, events: ds.length, status, error }, 'webhook delivery failed');
  return delivered;
}

function errorText(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
}
