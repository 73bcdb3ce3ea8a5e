/**
 * What the commerce store keeps: the product center's products (token packages for sale), redemption codes, and the
 * Checkout Sessions this proxy created.
 */
import type { UnixSeconds } from './common';

export interface Product {
  id: string;
  name: string;
  tokens: number;
  /** Days a bought package stays usable; null: it does not expire. */
  validDays: number | null;
  /** In the currency's smallest unit (cents), as Stripe counts it. */
  price: number;
  /** ISO 4217, lower case. */
  currency: string;
  /** Only active products are listed to account holders and sold. */
  active: boolean;
  created: UnixSeconds;
}

export type NewProduct = Omit<Product, 'created'>;
export type ProductPatch = Partial<Omit<Product, 'id' | 'created'>>;
export type CreateProductResult = { kind: 'created'; product: Product } | { kind: 'id_taken' };

export interface RedemptionCode {
  id: string;
  /** The product it was made for; null for a plain token amount. */
  productId: string | null;
  tokens: number;
  validDays: number | null;
  /** After this the code can no longer be redeemed; null: never. */
  expiresAt: UnixSeconds | null;
  created: UnixSeconds;
  redeemedBy: string | null;
  redeemedAt: UnixSeconds | null;
  /** The package was credited (the claim's second step confirmed). */
  credited: boolean;
}

export interface NewRedemptionCode {
  /** SHA-256 of the normalised code, hex: the code itself is never stored. */
  hash: string;
  productId: string | null;
  tokens: number;
  validDays: number | null;
  expiresAt: UnixSeconds | null;
}

export type ClaimResult =
  /** Claimed for this account; `resumed`: it was already, by an attempt whose credit was not confirmed. */
  { kind: 'claimed'; code: RedemptionCode; resumed: boolean } | { kind: 'used' } | { kind: 'expired' } | { kind: 'unknown' };

/**
 * A Stripe Checkout Session this proxy created: what it sold, to whom, at what price. The payment webhook credits only
 * sessions recorded here, and only what the record says, so a session signed by Stripe but made by anyone else
 * (another app on the same Stripe account, someone with dashboard or API access) credits nothing.
 */
export interface CheckoutRecord {
  /** Stripe's id of the session (`cs_…`). */
  sessionId: string;
  accountId: string;
  productId: string;
  /** The package as sold then: a product edited before the payment completes does not change what was bought. */
  tokens: number;
  validDays: number | null;
  /** The price charged, in the currency's smallest unit, and its currency (lower case). */
  amount: number;
  currency: string;
  created: UnixSeconds;
}

export type NewCheckout = Omit<CheckoutRecord, 'created'>;

/** How long a Checkout Session's record is kept: far longer than Stripe takes to settle a delayed payment. */
export const CHECKOUT_RECORD_DAYS = 90;
