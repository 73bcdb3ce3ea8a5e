/** The embedded commerce store: products, redemption codes and checkouts in this process's memory (one process only). */
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
import type { CommerceStore } from '../ports/commerce-store';
import { newId } from '../ids';

export class MemoryCommerceStore implements CommerceStore {
  private readonly products = new Map<string, Product>();
  private readonly codes = new Map<string, RedemptionCode>();
  private readonly codeByHash = new Map<string, string>();
  private readonly checkouts = new Map<string, CheckoutRecord>();

  constructor(private readonly now: () => number = Date.now) {}

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  async createProduct(input: NewProduct): Promise<CreateProductResult> {
    if (this.products.has(input.id)) return { kind: 'id_taken' };
    const product = { ...input, created: this.seconds() };
    this.products.set(input.id, product);
    return { kind: 'created', product: { ...product } };
  }

  async getProduct(id: string): Promise<Product | undefined> {
    const p = this.products.get(id);
    return p && { ...p };
  }

  async listProducts(): Promise<Product[]> {
    return [...this.products.values()].map((p) => ({ ...p }));
  }

  async updateProduct(id: string, patch: ProductPatch): Promise<Product | undefined> {
    const p = this.products.get(id);
    if (!p) return undefined;
    for (const [field, value] of Object.entries(patch)) if (value !== undefined) Object.assign(p, { [field]: value });
    return { ...p };
  }

  async createCodes(codes: NewRedemptionCode[]): Promise<RedemptionCode[]> {
    const created = this.seconds();
    return codes.map(({ hash, ...c }) => {
      const code: RedemptionCode = { ...c, id: newId('rc'), created, redeemedBy: null, redeemedAt: null, credited: false };
      this.codes.set(code.id, code);
      if (!this.codeByHash.has(hash)) this.codeByHash.set(hash, code.id);
      return { ...code };
    });
  }

  async listCodes(): Promise<RedemptionCode[]> {
    return [...this.codes.values()].map((c) => ({ ...c }));
  }

  async claimCode(hash: string, accountId: string): Promise<ClaimResult> {
    const id = this.codeByHash.get(hash);
    const code = id === undefined ? undefined : this.codes.get(id);
    if (!code) return { kind: 'unknown' };
    if (code.redeemedBy !== null) {
      if (code.redeemedBy === accountId && !code.credited) return { kind: 'claimed', code: { ...code }, resumed: true };
      return { kind: 'used' };
    }
    const now = this.seconds();
    if (code.expiresAt !== null && code.expiresAt <= now) return { kind: 'expired' };
    code.redeemedBy = accountId;
    code.redeemedAt = now;
    return { kind: 'claimed', code: { ...code }, resumed: false };
  }

  async markCredited(codeId: string): Promise<void> {
    const code = this.codes.get(codeId);
    if (code?.redeemedBy) code.credited = true;
  }

  async recordCheckout(checkout: NewCheckout): Promise<void> {
    this.checkouts.set(checkout.sessionId, { ...checkout, created: this.seconds() });
  }

  async getCheckout(sessionId: string): Promise<CheckoutRecord | undefined> {
    const c = this.checkouts.get(sessionId);
    return c && { ...c };
  }

  async close(): Promise<void> {}
}
