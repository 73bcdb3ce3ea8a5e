/** Store records as the self-service API shows them (the shapes in schemas.ts): snake_case, Unix seconds. */
import { limitsObject } from '../limits/limits';
import type { Product } from '../store/records/commerce';
import type { AccountRecord, AccountState } from '../store/records/account';
import type { KeyRecord } from '../store/records/key';
import type { TokenPackage } from '../store/records/common';
import type * as api from './schemas';

export function accountObject(a: AccountRecord): api.Account {
  return { id: a.id, email: a.email ?? '', name: a.name, role: a.role, status: a.status, created: a.created };
}

export function packageObject(p: TokenPackage): api.TokenPackage {
  return { id: p.id, tokens: p.tokens, remaining: p.remaining, expires_at: p.expiresAt, created: p.created };
}

export function meObject(a: AccountState): api.Me {
  return {
    ...accountObject(a),
    balance: a.balance,
    reserved: a.reserved,
    debt: a.debt,
    packages: a.packages.map(packageObject),
    usage: {
      requests: a.usage.requests,
      prompt_tokens: a.usage.promptTokens,
      completion_tokens: a.usage.completionTokens,
      charged_tokens: a.usage.chargedTokens,
    },
  };
}

export function apiKeyObject(k: KeyRecord): api.ApiKey {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created: k.created,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
    last_used: k.lastUsed,
    spent: k.spentTokens,
    limit_tokens: k.limitTokens,
    models: k.models,
    limits: k.limits && limitsObject(k.limits),
  };
}

export function productObject(p: Product): api.Product {
  return { id: p.id, name: p.name, tokens: p.tokens, valid_days: p.validDays, price: p.price, currency: p.currency, active: p.active };
}
