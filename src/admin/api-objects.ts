/** The admin API's JSON objects: store records in snake_case, times as Unix seconds. */
import { limitsObject, type LevelUse, type LimitsInput } from '../limits/limits';
import { type AccountRecord, type AccountState } from '../store/records/account';
import { keyStatus, type KeyRecord, type KeyState, type KeyStatus } from '../store/records/key';
import { type UsageRecord } from '../store/records/metering';
import { type TokenPackage, type UsageTotals } from '../store/records/common';

export interface AccountObject {
  id: string;
  email: string | null;
  name: string;
  role: AccountRecord['role'];
  status: AccountRecord['status'];
  /** Whether the account can log in to the console (never the hash itself). */
  has_password: boolean;
  created: number;
  /** `{rpm?, tpm?, max_concurrent?}` shared by all its keys; null: none. */
  limits: LimitsInput | null;
}

export interface UsageTotalsObject {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  charged_tokens: number;
}

/** An account in the operator's list: its balance too, so a page of accounts needs no second request per row. */
export interface AccountListObject extends AccountObject {
  balance: number;
  reserved: number;
  debt: number;
}

export interface AccountDetailObject extends AccountListObject {
  packages: PackageObject[];
  usage: UsageTotalsObject;
  /** The current use of the account's limits; null without limits. */
  limit_use: LimitUseObject | null;
}

export interface KeyObject {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  created: number;
  expires_at: number | null;
  revoked_at: number | null;
  models: string[] | null;
  /** The most this key may ever be charged; null: no cap of its own. */
  limit_tokens: number | null;
  spent_tokens: number;
  last_used: number | null;
  status: KeyStatus;
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
  usage: UsageTotalsObject;
  /** The current use of the key's limits; null without limits. */
  limit_use: LimitUseObject | null;
}

export interface UsageObject {
  request_id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  /** The endpoint the request used: `chat`, `completions`, `embeddings` or `responses`. */
  endpoint: string;
  prompt_tokens: number;
  completion_tokens: number;
  charged_tokens: number;
  estimated: boolean;
  stream: boolean;
  status: number;
  created: number;
  cursor: string;
}

/** A usage record as the operator reads it: with who made it in words (the account's email, the key's name). */
export interface OperatorUsageObject extends UsageObject {
  /** Null for an account without an email (API only). */
  account_email: string | null;
  /** Null for a request without a key. */
  key_name: string | null;
}

export function accountObject(a: AccountRecord): AccountObject {
  return {
    id: a.id,
    email: a.email,
    name: a.name,
    role: a.role,
    status: a.status,
    has_password: a.passwordHash !== null,
    created: a.created,
    limits: a.limits && limitsObject(a.limits),
  };
}

export function accountListObject(a: AccountState): AccountListObject {
  return { ...accountObject(a), balance: a.balance, reserved: a.reserved, debt: a.debt };
}

export function accountDetailObject(a: AccountState): AccountDetailObject {
  return {
    ...accountListObject(a),
    packages: a.packages.map(packageObject),
    usage: usageTotalsObject(a.usage),
    limit_use: a.limitUse && limitUseObject(a.limitUse),
  };
}

export function usageTotalsObject(u: UsageTotals): UsageTotalsObject {
  return {
    requests: u.requests,
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    charged_tokens: u.chargedTokens,
  };
}

export function keyObject(k: KeyRecord): KeyObject {
  return {
    id: k.id,
    account_id: k.accountId,
    name: k.name,
    prefix: k.prefix,
    created: k.created,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
    models: k.models,
    limit_tokens: k.limitTokens,
    spent_tokens: k.spentTokens,
    last_used: k.lastUsed,
    status: keyStatus(k, Math.floor(Date.now() / 1000)),
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
    usage: usageTotalsObject(k.usage),
    limit_use: k.limitUse && limitUseObject(k.limitUse),
  };
}

export function usageObject(r: UsageRecord): UsageObject {
  return {
    request_id: r.requestId,
    account_id: r.accountId,
    key_id: r.keyId,
    model: r.model,
    endpoint: r.endpoint,
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

export function operatorUsageObject(r: UsageRecord, names: { accountEmail: string | null; keyName: string | null }): OperatorUsageObject {
  return { ...usageObject(r), account_email: names.accountEmail, key_name: names.keyName };
}
