/** What the commerce store keeps: the product center's products (token packages for sale) and redemption codes. */
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
