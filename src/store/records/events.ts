/** Events and their webhook deliveries as the stores keep them: the outbox of each account, endpoints, attempts. */
import type { UnixSeconds } from './common';
import type { Settlement } from './metering';

/** Every event type, in docs/webhooks-and-events.md's order. `usage.settled` is only sent to endpoints that name it (opt-in). */
export const EVENT_TYPES = [
  'key.created',
  'key.revoked',
  'account.created',
  'account.disabled',
  'package.granted',
  'package.expiring',
  'package.expired',
  'balance.low',
  'budget.threshold',
  'budget.exceeded',
  'usage.settled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The types an endpoint with `["*"]` receives: every one but the per-request `usage.settled`. */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => t !== 'usage.settled');

/**
 * What the stores write events for, set by the webhooks feature from the endpoints configured. With nothing wanted
 * (no endpoint), every store step runs exactly as without events: no extra Redis work, no extra allocation.
 */
export interface EventWants {
  types: ReadonlySet<EventType>;
  /** balance.low's threshold for an account that has none of its own. */
  lowBalance: LowBalanceDefault;
}

/** balance.low's threshold for an account without its own (LOW_BALANCE_TOKENS, LOW_BALANCE_PERCENT). */
export interface LowBalanceDefault {
  /** The same threshold for every account, in tokens; undefined: `percent` of each account's last grant. */
  tokens?: number;
  /** Percent of the account's last grant (the tokens of its most recent credit). */
  percent: number;
}

export const NO_EVENTS: EventWants = { types: new Set(), lowBalance: { percent: 0 } };

/**
 * balance.low's threshold, the same rule in both stores (the Redis one is events/prologue.lua's ev_low_balance): the
 * account's own (`own`), else the fixed default, else the default percent of its last grant, rounded down; null (no
 * balance.low) for an account with none of these, one never granted anything. A share of the last grant fits the
 * account: a 500-token account is not "low" from the start, as it was against one fixed 10,000.
 */
export function lowBalanceThreshold(own: number | null, lastGrant: number | null, d: LowBalanceDefault): number | null {
  if (own !== null) return own;
  if (d.tokens !== undefined) return d.tokens;
  return lastGrant === null ? null : Math.floor((lastGrant * d.percent) / 100);
}

/** An event waiting in its account's outbox, written in the same atomic step as its cause. */
export interface OutboxEvent {
  /** `evt_…`, or for usage.settled the request id (so a billing system de-duplicates on it). */
  id: string;
  type: EventType;
  accountId: string;
  created: UnixSeconds;
  /** The event's data, as JSON. */
  data: string;
  /** Position in the account's outbox (a Redis stream id in both stores). */
  cursor: string;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The types it receives; `*` stands for DEFAULT_EVENT_TYPES. */
  types: readonly (EventType | '*')[];
  /** The signing secret (`whsec_…`): shown once at creation, kept only for signing. */
  secret: string;
  created: UnixSeconds;
  /**
   * Up to this many usage.settled events per POST, as one CloudEvents batch (`application/cloudevents-batch+json`);
   * absent: one event per POST. Other types always go one per POST.
   */
  batch?: number;
}

/** What an operator sees of an endpoint's queue: how much waits, since when, and why the last attempt failed. */
export interface EndpointBacklog {
  /** Deliveries queued and not yet delivered or given up. */
  pending: number;
  /** When the oldest of them was queued (Unix seconds); null with none. */
  oldestCreated: UnixSeconds | null;
  /** The endpoint's last failed attempt (kept after later successes); null if none failed. */
  lastError: DeliveryAttempt | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryAttempt {
  at: UnixSeconds;
  /** The receiver's HTTP status; null when there was no answer (refused, timed out, bad URL). */
  status: number | null;
  error: string | null;
}

/** One event's delivery to one endpoint; kept after it ends (the last DELIVERY_HISTORY per endpoint). */
export interface Delivery {
  id: string;
  endpointId: string;
  eventId: string;
  type: EventType;
  /** The exact JSON body sent (and signed). */
  body: string;
  status: DeliveryStatus;
  created: UnixSeconds;
  /** When the next attempt is due, in ms; 0 once it ended. */
  nextAttemptMs: number;
  attempts: DeliveryAttempt[];
}

/** Ended deliveries kept per endpoint for the admin API. */
export const DELIVERY_HISTORY = 1000;

/** usage.settled's data (the CloudEvent's `data`). */
export function usageSettledData(s: Settlement): string {
  // A settlement without an endpoint is chat's.
  return JSON.stringify({
    request_id: s.requestId,
    key_id: s.keyId,
    model: s.model,
    endpoint: s.endpoint ?? 'chat',
    prompt_tokens: s.promptTokens,
    cached_tokens: s.cachedTokens ?? 0,
    completion_tokens: s.completionTokens,
    reasoning_tokens: s.reasoningTokens ?? 0,
    // The hosted tool line, as the ledger keeps it: only on a request that made hosted tool calls.
    ...(s.toolCalls ? { tool_calls: s.toolCalls, tool_tokens: s.toolTokens ?? 0 } : {}),
    charged_tokens: s.chargedTokens,
    estimated: s.estimated,
    stream: s.stream,
    status: s.status,
  });
}

/** The balance.low data the memory store writes (the Redis script formats the same). */
export function lowBalanceData(accountId: string, balance: number, threshold: number): string {
  return JSON.stringify({ account_id: accountId, balance, threshold });
}

/** budget.threshold fires once a period's charged tokens reach this share of the budget (as a fraction: 4/5). */
export const BUDGET_THRESHOLD = { numerator: 4, denominator: 5 } as const;

/**
 * budget.threshold's and budget.exceeded's data, the same for a key's and an account's budget (`key_id` null for an
 * account's, which all its keys share); the Redis script formats the same (events/prologue.lua).
 */
export function budgetEventData(e: {
  accountId: string;
  keyId: string | null;
  level: 'key' | 'account';
  tokens: number;
  period: string;
  spent: number;
  periodStart: number;
  resetsAt: number;
}): string {
  return JSON.stringify({
    account_id: e.accountId,
    key_id: e.keyId,
    level: e.level,
    tokens: e.tokens,
    period: e.period,
    spent: e.spent,
    period_start: e.periodStart,
    resets_at: e.resetsAt,
  });
}

/** Where a grant came from, by its once-id: a redeemed code, a Stripe Checkout, or the operator. */
export function grantSource(once: string | undefined): 'code' | 'checkout' | 'signup' | 'admin' {
  if (once?.startsWith('code:')) return 'code';
  if (once === 'signup') return 'signup';
  if (once?.startsWith('stripe:')) return 'checkout';
  return 'admin';
}

export function packageGrantedData(
  accountId: string,
  pkg: { id: string; tokens: number; expiresAt: number | null },
  once?: string,
): string {
  return JSON.stringify({
    account_id: accountId,
    package_id: pkg.id,
    tokens: pkg.tokens,
    expires_at: pkg.expiresAt,
    source: grantSource(once),
  });
}

/**
 * package.expiring's and package.expired's data (the Redis script formats the same): `remaining` is what the package
 * still holds, or, once expired, what was left unused.
 */
export function packageExpiryData(accountId: string, pkg: { id: string; tokens: number; remaining: number; expiresAt: number }): string {
  return JSON.stringify({
    account_id: accountId,
    package_id: pkg.id,
    tokens: pkg.tokens,
    remaining: pkg.remaining,
    expires_at: pkg.expiresAt,
  });
}

export function keyCreatedData(k: { id: string; accountId: string; name: string; prefix: string; expiresAt: number | null }): string {
  return JSON.stringify({ key_id: k.id, account_id: k.accountId, name: k.name, prefix: k.prefix, expires_at: k.expiresAt });
}

export function accountDisabledData(accountId: string): string {
  return JSON.stringify({ account_id: accountId });
}

export function keyRevokedData(keyId: string, accountId: string): string {
  return JSON.stringify({ key_id: keyId, account_id: accountId });
}

export function accountData(a: { id: string; email: string | null; name: string; role: string; status: string }): string {
  return JSON.stringify({ account_id: a.id, email: a.email, name: a.name, role: a.role, status: a.status });
}

/**
 * The JSON body an endpoint receives for an event: `{id, type, created, data}`, or for usage.settled a CloudEvents 1.0
 * event that OpenMeter ingests unchanged (`subject` the account, `id` the request id, so a billing system
 * de-duplicates on it).
 */
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
