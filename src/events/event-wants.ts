/**
 * Which events the stores write, from the endpoints configured: none while there is no endpoint (every step then runs
 * its plain script: the wrapped ones cost a request ~25 % more CPU in the store client, measured); once any exists,
 * every rare event (a key's, an account's, a package's, balance.low, the budgets'), and the per-request usage.settled
 * while some endpoint names it. Before the endpoints were first read (`undefined`), every type: a process that has
 * just started loses nothing to an endpoint it has not read yet. A change of the endpoints reaches every process before
 * it is answered (WebhookStore.watchEndpoints), so the gates never drop an event caused after it.
 */
import {
  DEFAULT_EVENT_TYPES,
  EVENT_TYPES,
  type EventType,
  type EventWants,
  type LowBalanceDefault,
  type WebhookEndpoint,
} from '../store/records/events';

export function wantsFor(endpoints: readonly WebhookEndpoint[] | undefined, lowBalance: LowBalanceDefault): EventWants {
  if (endpoints === undefined) return { types: new Set<EventType>(EVENT_TYPES), lowBalance };
  if (endpoints.length === 0) return { types: new Set<EventType>(), lowBalance };
  const types = new Set<EventType>(DEFAULT_EVENT_TYPES);
  if (endpoints.some((e) => e.types.includes('usage.settled'))) types.add('usage.settled');
  return { types, lowBalance };
}

/** An endpoint's types with `*` spelled out. */
export function expand(types: readonly (EventType | '*')[]): EventType[] {
  return types.flatMap((t) => (t === '*' ? DEFAULT_EVENT_TYPES : [t]));
}

/** Whether the endpoint receives events of this type. */
export function receives(endpoint: WebhookEndpoint, type: EventType): boolean {
  return endpoint.types.includes(type) || (type !== 'usage.settled' && endpoint.types.includes('*'));
}
