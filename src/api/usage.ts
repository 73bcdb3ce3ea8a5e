/**
 * The usage ledger as the APIs show it: records (the same object to the operator and to the account holder), the
 * queries that read them, totals, and the console's daily rows.
 */
import { z } from 'zod';
import type { UsageQuery as LedgerQuery, UsageRecord } from '../store/records/metering';
import type { UsageTotals } from '../store/records/common';
import type { DailyRow } from '../store/records/rollups';
import { beforeCursor, cursor, list, pageLimit, tokenCount, unixQuery, unixTime } from './fields';

/** `cached_tokens` are of the prompt tokens, `reasoning_tokens` of the completion tokens (as the upstreams count them). */
export const usageTotalsSchema = z.strictObject({
  requests: tokenCount,
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  cached_tokens: tokenCount,
  reasoning_tokens: tokenCount,
  charged_tokens: tokenCount,
});
export type UsageTotalsObject = z.infer<typeof usageTotalsSchema>;

export function usageTotalsObject(u: UsageTotals): UsageTotalsObject {
  return {
    requests: u.requests,
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    cached_tokens: u.cachedTokens,
    reasoning_tokens: u.reasoningTokens,
    charged_tokens: u.chargedTokens,
  };
}

/**
 * One request in the ledger. `estimated`: the upstream reported no usage and our tokenizer counted; `status`: what the
 * client got (499 when it went away mid-stream); `key_id` is null for a request charged to its account without a key.
 * `cached_tokens`: of the prompt tokens, those the upstream reported as cached (charged at the model's cached-input
 * weight); `reasoning_tokens`: of the completion tokens, those it reported as reasoning (charged as output);
 * `tool_calls` and `tool_tokens` (only on a request that made hosted tool calls): the calls charged and, of the
 * charged tokens, those for them (docs/hosted-tools-and-stored-items.md).
 */
export const usageSchema = z.strictObject({
  request_id: z.string(),
  account_id: z.string(),
  key_id: z.string().nullable(),
  model: z.string(),
  /** The endpoint the request used: `chat`, `completions`, `embeddings` or `responses`. */
  endpoint: z.string(),
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  cached_tokens: tokenCount,
  reasoning_tokens: tokenCount,
  tool_calls: tokenCount.optional(),
  tool_tokens: tokenCount.optional(),
  charged_tokens: tokenCount,
  estimated: z.boolean(),
  stream: z.boolean(),
  status: z.number().int(),
  created: unixTime,
  cursor: z.string(),
});
export type UsageObject = z.infer<typeof usageSchema>;

export function usageObject(r: UsageRecord): UsageObject {
  return {
    request_id: r.requestId,
    account_id: r.accountId,
    key_id: r.keyId,
    model: r.model,
    endpoint: r.endpoint,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    cached_tokens: r.cachedTokens,
    reasoning_tokens: r.reasoningTokens,
    ...(r.toolCalls ? { tool_calls: r.toolCalls, tool_tokens: r.toolTokens ?? 0 } : {}),
    charged_tokens: r.chargedTokens,
    estimated: r.estimated,
    stream: r.stream,
    status: r.status,
    created: r.created,
    cursor: r.cursor,
  };
}

export const usageListSchema = list(usageSchema);

/** A record as the operator reads it (`GET /admin/usage`): who made it in words too. */
export const operatorUsageSchema = usageSchema.extend({
  /** The account's email; null for an account without one (API only). */
  account_email: z.string().nullable(),
  /** The key's name; null for a request without a key. */
  key_name: z.string().nullable(),
});
export type OperatorUsageObject = z.infer<typeof operatorUsageSchema>;

export function operatorUsageObject(r: UsageRecord, names: { accountEmail: string | null; keyName: string | null }): OperatorUsageObject {
  return { ...usageObject(r), account_email: names.accountEmail, key_name: names.keyName };
}

export const operatorUsageListSchema = list(operatorUsageSchema);

/** `GET /console/api/usage`: an account holder's own ledger, by key, model and time, after or before a cursor. */
export const usageQuery = z.strictObject({
  key_id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  since: unixQuery.optional(),
  until: unixQuery.optional(),
  /** Records after this cursor, the oldest `limit` of them: to read on as new records arrive. */
  after: cursor.optional(),
  /** Records before this cursor, the newest `limit` of them: to page back in time. */
  before: beforeCursor.optional(),
  limit: pageLimit,
});
export type UsageQuery = z.input<typeof usageQuery>;

/** The store's query for a parsed usage query, in `accountId`'s ledger (any account's when undefined). */
export function ledgerQuery(q: z.output<typeof usageQuery>, accountId: string | undefined): LedgerQuery {
  const { key_id, model, since, until, after, before, limit } = q;
  return { accountId, keyId: key_id, model, since, until, after, before, limit };
}

/** `GET /admin/usage`: the same parameters, and the account to read (the operator may read any). */
export const operatorUsageQuery = usageQuery.extend({ account_id: z.string().min(1).optional() });
export type OperatorUsageQuery = z.input<typeof operatorUsageQuery>;

/** One UTC day and model of the account's ledger (`GET /console/api/usage/daily`). */
export const dailyUsageSchema = usageTotalsSchema.extend({
  /** `YYYY-MM-DD`, UTC. */
  date: z.string(),
  model: z.string(),
});
export type DailyUsageObject = z.infer<typeof dailyUsageSchema>;

export const dailyUsageListSchema = list(dailyUsageSchema);

/** A rollup row of one day and model. */
export function dailyUsageObject(r: DailyRow): DailyUsageObject {
  return { date: new Date(r.day * 86_400_000).toISOString().slice(0, 10), model: r.name, ...usageTotalsObject(r) };
}

export const dailyUsageQuery = z.strictObject({
  days: z.coerce
    .number<string | number>({ error: 'must be a number of days' })
    .int('must be a whole number of days')
    .min(1, 'must be at least 1')
    .max(366, 'must be at most 366')
    .default(30),
});

/** `GET /admin/usage/daily`: the same days, for one account or (without account_id) every account summed. */
export const operatorDailyUsageQuery = dailyUsageQuery.extend({ account_id: z.string().min(1).optional() });
