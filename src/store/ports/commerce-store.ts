/**
 * The commerce port, for the product center (src/products/): products and redemption codes (stored by hash, claimed
 * once). Crediting the package itself is the account port's `grantPackage` with a once-id.
 */
import type {
  ClaimResult,
  CreateProductResult,
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

  close(): Promise<void>;
}
