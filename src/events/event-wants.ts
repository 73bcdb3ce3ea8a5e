/**
 * Which events the stores write, from the endpoints configured: every rare event always (a key's, an account's, a
 * package's, balance.low, the budgets'), so none is lost to a process that has not yet heard of a new endpoint; the
 * per-request usage.settled only while some endpoint names it.
 */
import { DEFAULT_EVENT_TYPES, type EventType, type EventWants, type WebhookEndpoint } from '../store/records/events';

export function wantsFor(endpoints: readonly WebhookEndpoint[], lowBalanceTokens: number): EventWants {
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
