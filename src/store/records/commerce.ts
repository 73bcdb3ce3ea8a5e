/**
 * The commerce store contract: the product center's products (token packages for sale) and redemption codes
 * (stored by hash, claimed once). Crediting the package itself is the main store's `grantPackage` with a once-id.
 */
import type { UnixSeconds } from '../ports/store';

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
 * Every check-and-change is atomic: in Redis one Lua script on one slot, in memory one synchronous step. A thrown
 * error means the store is unreachable.
 */
export interface CommerceStore {
  createProduct(input: NewProduct): Promise<CreateProductResult>;
  getProduct(id: string): Promise<Product | undefined>;
  /** Every product, in creation order. */
  listProducts(): Promise<Product[]>;
  /** Undefined when there is no such product. */
  updateProduct(id: string, patch: ProductPatch): Promise<Product | undefined>;

  createCodes(codes: NewRedemptionCode[]): Promise<RedemptionCode[]>;
  /** Every code, oldest first. */
  listCodes(): Promise<RedemptionCode[]>;
  /**
   * Claims the code with this hash for an account: exactly one account ever claims a code, however many try at
   * once on however many processes. The same account claiming again before `markCredited` gets it back (resumed),
   * so a crash between claim and credit loses nothing.
   */
  claimCode(hash: string, accountId: string): Promise<ClaimResult>;
  /** Records that the claimed code's package was credited; later claims answer `used`. */
  markCredited(codeId: string): Promise<void>;

  close(): Promise<void>;
}
