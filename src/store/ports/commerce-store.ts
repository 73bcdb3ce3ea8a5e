/**
 * The commerce port, for the product center (src/products/): products, redemption codes (stored by hash, claimed
 * once) and the Checkout Sessions this proxy created. Crediting the package itself is the account port's
 * `grantPackage` with a once-id.
 */
import type {
  CheckoutRecord,
  ClaimResult,
  CreateProductResult,
  NewCheckout,
  NewProduct,
  NewRedemptionCode,
  Product,
  ProductPatch,
  RedemptionCode,
} from '../records/commerce';

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

  /** Records a Checkout Session this proxy just created (before its page is given to the buyer). */
  recordCheckout(checkout: NewCheckout): Promise<void>;
  /** The session recorded under this id (for CHECKOUT_RECORD_DAYS at least); undefined: not one this proxy created. */
  getCheckout(sessionId: string): Promise<CheckoutRecord | undefined>;

  close(): Promise<void>;
}
