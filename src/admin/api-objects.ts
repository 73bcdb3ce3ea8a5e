/** The admin API's JSON objects: store records in snake_case, times as Unix seconds. */
import { limitsObject, type LevelUse, type LimitsInput } from '../limits/limits';
import type { KeyRecord, KeyState, TokenPackage, UsageRecord } from '../store/types';

export interface KeyObject {
  id: string;
  name: string;
  prefix: string;
  created: number;
  expires_at: number | null;
  revoked_at: number | null;
  models: string[] | null;
  /** `{rpm?, tpm?, max_concurrent?}`; null: none. */
  limits: LimitsInput | null;
}

/** What a level's limits hold now: requests and tokens in the window, requests in flight. */
export interface LimitUseObject {
  requests?: { limit: number; remaining: number; reset_ms: number };
  tokens?: { limit: number; remaining: number; reset_ms: number };
  concurrent?: { limit: number; in_flight: number };
}

export interface PackageObject {
  id: string;
  tokens: number;
  remaining: number;
  expires_at: number | null;
  created: number;
}

export interface KeyDetailObject extends KeyObject {
  balance: number;
  reserved: number;
  debt: number;
  packages: PackageObject[];
  usage: { requests: number; prompt_tokens: number; completion_tokens: number; charged_tokens: number };
  /** The current use of the key's limits; null without limits. */
  limit_use: LimitUseObject | null;
}

export interface UsageObject {
  request_id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  charged_tokens: number;
  estimated: boolean;
  stream: boolean;
  status: number;
  created: number;
  cursor: string;
}

export function keyObject(k: KeyRecord): KeyObject {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created: k.created,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
    models: k.models,
    limits: k.limits && limitsObject(k.limits),
  };
}

export function limitUseObject(u: LevelUse): LimitUseObject {
  const out: LimitUseObject = {};
  if (u.requests) out.requests = { limit: u.requests.limit, remaining: u.requests.remaining, reset_ms: u.requests.resetMs };
  if (u.tokens) out.tokens = { limit: u.tokens.limit, remaining: u.tokens.remaining, reset_ms: u.tokens.resetMs };
  if (u.concurrent) out.concurrent = { limit: u.concurrent.limit, in_flight: u.concurrent.inFlight };
  return out;
}

export function packageObject(p: TokenPackage): PackageObject {
  return { id: p.id, tokens: p.tokens, remaining: p.remaining, expires_at: p.expiresAt, created: p.created };
}

export function keyDetailObject(k: KeyState): KeyDetailObject {
  return {
    ...keyObject(k),
    balance: k.balance,
    reserved: k.reserved,
    debt: k.debt,
    packages: k.packages.map(packageObject),
    usage: {
      requests: k.usage.requests,
      prompt_tokens: k.usage.promptTokens,
      completion_tokens: k.usage.completionTokens,
      charged_tokens: k.usage.chargedTokens,
    },
    limit_use: k.limitUse && limitUseObject(k.limitUse),
  };
}

export function usageObject(r: UsageRecord): UsageObject {
  return {
    request_id: r.requestId,
    account_id: r.accountId,
    key_id: r.keyId,
    model: r.model,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    charged_tokens: r.chargedTokens,
    estimated: r.estimated,
    stream: r.stream,
    status: r.status,
    created: r.created,
    cursor: r.cursor,
  };
}
