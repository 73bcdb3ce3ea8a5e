/** How the Redis store's hashes and stream entries read back as store records, and its script replies checked. */
import { budgetStatus, decodeBudget, periodEnd, type BudgetPeriod, type BudgetStatus } from '../../limits/budget';
import { decodeLimits, type LevelUse } from '../../limits/limits';
import { cursorMs, keyIdFromCompact, uuidFromCompact } from '../ids';
import { parseLevelUse, parseRefusal } from './limit-replies';
import type { AccountRecord, AccountState } from '../records/account';
import type { KeyRecord, KeyState } from '../records/key';
import type { ReserveResult, UsageRecord } from '../records/metering';
import type { TokenPackage, UsageTotals } from '../records/common';

/** A reply of a shape no script of ours returns: the store is not the one we think it is. */
export class StoreReplyError extends Error {
  override name = 'StoreReplyError';
}

export function tuple(reply: unknown, script: string): unknown[] {
  if (!Array.isArray(reply)) throw new StoreReplyError(`${script} replied ${JSON.stringify(reply)}`);
  return reply;
}

export function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

/** The one place RESERVE's reply shape is checked. */
export function parseReserveReply(reply: unknown): ReserveResult {
  const list = tuple(reply, 'RESERVE');
  const [tag, a, b] = list;
  switch (tag) {
    case 'ok': {
      // After per and amount: for each level with limits, its name and lim_use's 7 values.
      if (list.length === 3) return { kind: 'reserved', allowance: Number(a), amount: Number(b) };
      const limitUse: LevelUse[] = [];
      for (let i = 3; i + 8 <= list.length; i += 8) limitUse.push(parseLevelUse(list, i + 1));
      return { kind: 'reserved', allowance: Number(a), amount: Number(b), limitUse };
    }
    case 'limited':
      if ((a === 'key' || a === 'account') && list.length === 15) {
        return { kind: 'rate_limited', refusal: parseRefusal(list, 3, a, Number(b)) };
      }
      break;
    case 'short':
      if (b === 'account' || b === 'key') return { kind: 'insufficient_quota', available: Number(a), limitedBy: b };
      break;
    case 'budget': {
      // {'budget', level, tokens, period, used, period start, requested}
      const period = list[3] as BudgetPeriod;
      if ((a === 'key' || a === 'account') && list.length === 7 && (period === 'day' || period === 'week' || period === 'month')) {
        const [, , tokens, , used, start, requested] = list.map(Number);
        const refusal = { level: a, budget: { tokens, period }, used, requested, resetsAt: periodEnd(period, start) } as const;
        return { kind: 'budget_exceeded', refusal };
      }
      break;
    }
    case 'invalid':
      if (a === 'not_found' || a === 'revoked' || a === 'expired') return { kind: 'invalid_key', reason: a };
      break;
    case 'account':
      if (a === 'disabled') return { kind: 'account_disabled' };
      if (a === 'not_found') return { kind: 'account_not_found' };
      break;
    case 'model':
      return { kind: 'model_not_allowed' };
  }
  throw new StoreReplyError(`RESERVE replied ${JSON.stringify(reply)}`);
}

/** A hash's budget (fields bg bp bs bh, lua/helpers/budgets.lua) and its use at `ms`; null without one. */
export function parseBudget(h: Record<string, string>, ms: number): BudgetStatus | null {
  const budget = decodeBudget(h.bg);
  if (!budget) return null;
  const counters = h.bp === undefined ? undefined : { start: Number(h.bp), spent: Number(h.bs ?? 0), held: Number(h.bh ?? 0) };
  return budgetStatus(budget, counters, ms);
}

/** The account's record; its budget's use as of `ms`, the store's clock. */
export function parseAccount(id: string, h: Record<string, string>, ms: number): AccountRecord {
  return {
    id,
    email: h.email ? h.email : null,
    name: h.name ?? '',
    passwordHash: h.password_hash ? h.password_hash : null,
    role: h.role === 'admin' ? 'admin' : 'member',
    status: h.status === 'active' ? 'active' : 'disabled',
    created: Number(h.created ?? 0),
    limits: decodeLimits(h.rl),
    budget: parseBudget(h, ms),
  };
}

/** The key's record; its budget's use as of `ms`, the store's clock. */
export function parseKeyRecord(id: string, accountId: string, h: Record<string, string>, ms: number): KeyRecord {
  const expires = Number(h.expires_at ?? 0);
  const revoked = Number(h.revoked ?? 0);
  const lastUsed = Number(h.last_used || 0);
  return {
    id,
    accountId,
    name: h.name ?? '',
    prefix: h.prefix ?? '',
    created: Number(h.created ?? 0),
    expiresAt: expires > 0 ? expires : null,
    revokedAt: revoked > 0 ? revoked : null,
    models: h.models ? h.models.split('\n').filter(Boolean) : null,
    limitTokens: h.limit ? Number(h.limit) : null,
    spentTokens: Number(h.spent ?? 0),
    lastUsed: lastUsed > 0 ? lastUsed : null,
    limits: decodeLimits(h.rl),
    budget: parseBudget(h, ms),
  };
}

/** Usage totals from an account's totals hash, or from a key's hash (which keeps its charged tokens as `spent`). */
export function parseTotals(h: Record<string, string>): UsageTotals {
  return {
    requests: Number(h.requests ?? 0),
    promptTokens: Number(h.prompt_tokens ?? 0),
    completionTokens: Number(h.completion_tokens ?? 0),
    cachedTokens: Number(h.cached_tokens ?? 0),
    reasoningTokens: Number(h.reasoning_tokens ?? 0),
    chargedTokens: Number(h.charged_tokens ?? h.spent ?? 0),
  };
}

export function parsePackages(flat: string[]): TokenPackage[] {
  return Object.entries(pairs(flat))
    .map(([id, value]) => parsePackage(id, value))
    .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
}

export function parsePackage(id: string, value: string): TokenPackage {
  const [remaining, expires, tokens, created] = value.split(':').map(Number);
  return { id, tokens, remaining, expiresAt: expires > 0 ? expires : null, created };
}

/** Unexpired package remainders at `now`. */
export function liveTokens(packages: TokenPackage[], now: number): number {
  return packages.reduce((sum, p) => (p.expiresAt === null || p.expiresAt > now ? sum + p.remaining : sum), 0);
}

/**
 * A ledger entry. Records written before accounts carry no key_id: their ledger belonged to one key, whose id the
 * migrated account took, so the key is the account's id.
 */
export function parseUsageEntry(accountId: string, cursor: string, flat: string[]): UsageRecord {
  const f = pairs(flat);
  return {
    // A UUID request id is kept as its bytes in base64url (`rid`) since 27 Nov 2026.
    requestId: f.rid === undefined ? f.request_id : uuidFromCompact(f.rid),
    accountId,
    // A key id of newId's form is kept as its bytes in base64url (`kid`) since 29 Nov 2026.
    keyId: f.kid !== undefined ? keyIdFromCompact(f.kid) : f.key_id === undefined ? accountId : f.key_id === '' ? null : f.key_id,
    model: f.model,
    endpoint: f.endpoint ?? 'chat',
    promptTokens: Number(f.prompt_tokens),
    completionTokens: Number(f.completion_tokens),
    // Written only when not 0 (and not at all before they were recorded).
    cachedTokens: Number(f.cached_tokens ?? 0),
    reasoningTokens: Number(f.reasoning_tokens ?? 0),
    ...(f.tool_calls === undefined ? {} : { toolCalls: Number(f.tool_calls), toolTokens: Number(f.tool_tokens) }),
    chargedTokens: Number(f.charged_tokens),
    estimated: f.estimated === '1',
    stream: f.stream === '1',
    status: Number(f.status),
    // The entry's own id is its time (ms): records since 27 Nov 2026 keep no `created` field (11 bytes each).
    created: f.created === undefined ? Math.floor(cursorMs(cursor) / 1000) : Number(f.created),
    cursor,
  };
}

/** The h:<hash> index's value: "K A", or just "K" for a key from before accounts (its account took its id). */
export function parseKeyRef(value: string): { keyId: string; accountId: string } {
  const space = value.indexOf(' ');
  return space === -1 ? { keyId: value, accountId: value } : { keyId: value.slice(0, space), accountId: value.slice(space + 1) };
}

/** ACCOUNT_STATE's reply: {account fields, packages, totals, now, the account's lim_use or {}}. */
export function parseAccountState(
  accountId: string,
  [accountFlat, pkgFlat, totalsFlat, now, use]: [string[], string[], string[], number, unknown[]],
  ms: number,
): AccountState {
  const account = pairs(accountFlat);
  const packages = parsePackages(pkgFlat);
  const debt = Number(account.debt ?? 0);
  const reserved = Number(account.reserved ?? 0);
  return {
    ...parseAccount(accountId, account, ms),
    balance: liveTokens(packages, now) - debt - reserved,
    reserved,
    debt,
    packages,
    usage: parseTotals(pairs(totalsFlat)),
    limitUse: use.length > 0 ? parseLevelUse(use, 0) : null,
  };
}

/** KEY_STATE's reply: {account fields, key fields, packages, now, the key's lim_use or {}}; the balance is what the account offers the key. */
export function parseKeyState(
  keyId: string,
  accountId: string,
  [accountFlat, keyFlat, pkgFlat, now, use]: [string[], string[], string[], number, unknown[]],
  ms: number,
): KeyState {
  const account = pairs(accountFlat);
  const key = pairs(keyFlat);
  const packages = parsePackages(pkgFlat);
  const debt = Number(account.debt ?? 0);
  const record = parseKeyRecord(keyId, accountId, key, ms);
  const reserved = Number(key.reserved ?? 0);
  const accountBalance = liveTokens(packages, now) - debt - Number(account.reserved ?? 0);
  const capLeft = record.limitTokens === null ? Infinity : record.limitTokens - record.spentTokens - reserved;
  const limitUse = use.length > 0 ? parseLevelUse(use, 0) : null;
  return { ...record, balance: Math.min(accountBalance, capLeft), reserved, debt, packages, usage: parseTotals(key), limitUse };
}
