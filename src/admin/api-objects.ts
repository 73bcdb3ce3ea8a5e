/** The admin API's JSON objects: store records in snake_case, times as Unix seconds. */
import type { KeyRecord, KeyState, TokenPackage, UsageRecord } from '../store/types';

export interface KeyObject {
  id: string;
  name: string;
  prefix: string;
  created: number;
  expires_at: number | null;
  revoked_at: number | null;
  models: string[] | null;
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
  };
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
