/**
 * The shapes the console reads: the self-service API's own types, inferred from its zod schemas (type-only imports,
 * so no zod reaches the bundle), plus the operator routes' shapes, which have no shared schema yet.
 */
import type * as S from '../../src/console-api/schemas';

export type Usage = S.Me['usage'];
export type PackageObject = S.TokenPackage;
export type AccountObject = S.Account;
export type Me = S.Me;
export type KeyObject = S.ApiKey;
export type CreatedKey = S.CreatedKey;
export type DailyUsage = S.DailyUsageRow;
export type ProductObject = S.Product;
export type CreateKeyRequest = S.CreateKeyRequest;

/** A ledger record; the operator's view adds the account, and a keyless request (the operator's own) has no key. */
export type UsageObject = Omit<S.UsageRecord, 'key_id'> & { key_id: string | null; account_id?: string };

/** An account as the operator's routes list it (GET /admin/accounts): no balance; an API-only account has no email. */
export interface AccountListItem {
  id: string;
  email: string | null;
  name: string;
  role: 'member' | 'admin';
  status: 'active' | 'disabled';
  /** Whether the account can sign in to the console. */
  has_password: boolean;
  created: number;
}

/** One account in detail (GET /admin/accounts/:id): its balance, packages and usage too. */
export type AccountDetail = AccountListItem & Omit<S.Me, keyof S.Account>;

/** A redemption code as the operator lists it: its state, never the code. */
export interface CodeObject {
  id: string;
  product_id: string | null;
  tokens: number;
  valid_days: number | null;
  status: 'active' | 'redeemed' | 'expired';
  redeemed_by: string | null;
  redeemed_at: number | null;
  expires_at: number | null;
  created: number;
}

/** A code just generated: the only time the code itself is shown. */
export interface GeneratedCode extends CodeObject {
  code: string;
}
