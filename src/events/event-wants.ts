/**
 * Which events the stores write, from the endpoints configured: none while there is no endpoint (every step then runs
 * its plain script: the wrapped ones cost a request ~10 % more CPU, measured with bench:compare); once any exists,
 * every rare event (a key's, an account's, a package's, balance.low, the budgets'), so none is lost to a process that
 * has not yet heard of a later endpoint; the per-request usage.settled only while some endpoint names it. The first
 * endpoint reaches the other processes as usage.settled's gate does (pub/sub, and a re-read every second).
 */
import { DEFAULT_EVENT_TYPES, type EventType, type EventWants, type WebhookEndpoint } from '../store/records/events';

export function wantsFor(endpoints: readonly WebhookEndpoint[], lowBalanceTokens: number): EventWants {
  if (endpoints.length === 0) return { types: new Set<EventType>(), lowBalanceTokens };
  const types = new Set<EventType>(DEFAULT_EVENT_TYPES);
  if (endpoints.some((e) => e.types.includes('usage.settled'))) types.add('usage.settled');
  return { types, lowBalanceTokens };
}

/** An endpoint's types with `*` spelled out. */
export function expand(types: readonly (EventType | '*')[]): EventType[] {
  return types.flatMap((t) => (t === '*' ? DEFAULT_EVENT_TYPES : [t]));
}

/** Whether the endpoint receives events of this type. */
export function receives(endpoint: WebhookEndpoint, type: EventType): boolean {
  return endpoint.types.includes(type) || (type !== 'usage.settled' && endpoint.types.includes('*'));
}
