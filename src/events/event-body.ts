/**
 * The JSON body an endpoint receives for an event: `{id, type, created, data}`, or for usage.settled a CloudEvents 1.0
 * event that OpenMeter ingests unchanged (`subject` the account, `id` the request id, so a billing system
 * de-duplicates on it).
 */
import type { OutboxEvent } from '../store/records/events';

/** The CloudEvents `source` of usage.settled. */
export const CLOUDEVENTS_SOURCE = 'tokenmeter';

export function eventBody(e: OutboxEvent): string {
  if (e.type === 'usage.settled') {
    return `{"specversion":"1.0","type":"usage.settled","source":"${CLOUDEVENTS_SOURCE}","id":${JSON.stringify(e.id)},"subject":${JSON.stringify(
      e.accountId,
    )},"time":"${new Date(e.created * 1000).toISOString()}","datacontenttype":"application/json","data":${e.data}}`;
  }
  return `{"id":${JSON.stringify(e.id)},"type":"${e.type}","created":${e.created},"data":${e.data}}`;
}
