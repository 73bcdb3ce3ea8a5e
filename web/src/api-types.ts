/**
 * The shapes the console reads: the self-service API's own types, inferred from its zod schemas (type-only imports,
 * so no zod reaches the bundle), plus the operator routes' shapes, which have no shared schema yet.
 */
import type * as S from '../../src/console-api/schemas';
import type { ModelObject } from '../../src/catalog/models-api';

export type { ModelObject };

export type Usage = S.Me['usage'];
export type PackageObject = S.TokenPackage;
export type AccountObject = S.Account;
export type Me = S.Me;
export type KeyObject = S.ApiKey;
export type CreatedKey = S.CreatedKey;
export type DailyUsage = S.DailyUsageRow;
export type ProductObject = S.Product;
export type ProductList = S.ProductList;
export type CreateKeyRequest = S.CreateKeyRequest;

/**
 * A ledger record; the operator's view adds the account, with its email and the key's name (null: none), and a
 * keyless request (the operator's own) has no key.
 */
export type UsageObject = Omit<S.UsageRecord, 'key_id'> & {
  key_id: string | null;
  account_id?: string;
  account_email?: string | null;
  key_name?: string | null;
};

/** An account as the operator's routes return it (PATCH /admin/accounts/:id); an API-only account has no email. */
export interface AccountItem {
  id: string;
  email: string | null;
  name: string;
  role: 'member' | 'admin';
  status: 'active' | 'disabled';
  /** Whether the account can sign in to the console. */
  has_password: boolean;
  created: number;
}

/** An account in the operator's list (GET /admin/accounts): with its balance, reserved tokens and debt. */
export type AccountListItem = AccountItem & Pick<S.Me, 'balance' | 'reserved' | 'debt'>;

/** One account in detail (GET /admin/accounts/:id): its balance, packages and usage too. */
export type AccountDetail = AccountItem & Omit<S.Me, keyof S.Account>;

/** A redemption code as the operator lists it: its state, never the code. */
export interface CodeObject {
  id: string;
  product_id: string | null;
  tokens: number;
  valid_days: number | null;
  status: 'active' | 'redeemed' | 'expired';
  redeemed_by: string | null;
  /** The redeeming account's email (null: not redeemed, or an account without one). */
  redeemed_by_email: string | null;
  redeemed_at: number | null;
  expires_at: number | null;
  created: number;
}

/** A code just generated: the only time the code itself is shown. */
export interface GeneratedCode extends CodeObject {
  code: string;
}
