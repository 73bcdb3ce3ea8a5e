/** The shared commerce store on Redis (or Redis Cluster): products, redemption codes and checkouts, one script per change. */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import {
  CHECKOUT_RECORD_DAYS,
  type CheckoutRecord,
  type ClaimResult,
  type CreateProductResult,
  type NewCheckout,
  type NewProduct,
  type NewRedemptionCode,
  type Product,
  type ProductPatch,
  type RedemptionCode,
} from '../records/commerce';
import type { CommerceStore } from '../ports/commerce-store';
import { luaScript } from './lua-scripts';
import { defineScripts } from './define-scripts';
import { newId } from '../ids';

export interface RedisCommerceStoreOptions {
  /** Prefix of every key we write. Default `tm:`. */
  prefix?: string;
}

export class RedisCommerceStore implements CommerceStore {
  private readonly prefix: string;
  private readonly run;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisCommerceStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? 'tm:';
    this.run = defineScripts(redis, {
      tmProductCreate: luaScript('commerce/product-create.lua'),
      tmProductUpdate: luaScript('commerce/product-update.lua'),
      tmCodeClaim: luaScript('commerce/code-claim.lua'),
      tmCodeCredited: luaScript('commerce/code-credited.lua'),
    });
  }

  private productKey(id: string): string {
    return `${this.prefix}{products}:p:${id}`;
  }
  private get productIds(): string {
    return `${this.prefix}{products}:ids`;
  }
  private codeKey(id: string): string {
    return `${this.prefix}{${id}}:rc`;
  }
  private checkoutKey(sessionId: string): string {
    return `${this.prefix}co:${sessionId}`;
  }

  async createProduct(p: NewProduct): Promise<CreateProductResult> {
    const created = Number(
      await this.run.tmProductCreate(
        [this.productKey(p.id), this.productIds],
        [
          JSON.stringify({
            id: p.id,
            name: p.name,
            tokens: p.tokens,
            valid_days: p.validDays ?? 0,
            price: p.price,
            currency: p.currency,
            active: p.active ? 1 : 0,
          }),
        ],
      ),
    );
    return created === 0 ? { kind: 'id_taken' } : { kind: 'created', product: { ...p, created } };
  }

  async getProduct(id: string): Promise<Product | undefined> {
    const h = await this.redis.hgetall(this.productKey(id));
    return h.created === undefined ? undefined : parseProduct(id, h);
  }

  async listProducts(): Promise<Product[]> {
    const ids = await this.redis.lrange(this.productIds, 0, -1);
    const products = await Promise.all(ids.map((id) => this.getProduct(id)));
    return products.filter((p): p is Product => p !== undefined);
  }

  async updateProduct(id: string, patch: ProductPatch): Promise<Product | undefined> {
    const fields: (string | number)[] = [];
    if (patch.name !== undefined) fields.push('name', patch.name);
    if (patch.tokens !== undefined) fields.push('tokens', patch.tokens);
    if (patch.validDays !== undefined) fields.push('valid_days', patch.validDays ?? 0);
    if (patch.price !== undefined) fields.push('price', patch.price);
    if (patch.currency !== undefined) fields.push('currency', patch.currency);
    if (patch.active !== undefined) fields.push('active', patch.active ? 1 : 0);
    const flat = (await this.run.tmProductUpdate([this.productKey(id)], [JSON.stringify({ fields })])) as string[];
    return flat.length === 0 ? undefined : parseProduct(id, pairs(flat));
  }

  async createCodes(codes: NewRedemptionCode[]): Promise<RedemptionCode[]> {
    const created = Math.floor(Date.now() / 1000);
    return Promise.all(
      codes.map(async ({ hash, ...c }) => {
        const id = newId('rc');
        await this.redis.hset(this.codeKey(id), {
          product_id: c.productId ?? '',
          tokens: c.tokens,
          valid_days: c.validDays ?? 0,
          expires_at: c.expiresAt ?? 0,
          created,
          redeemed_by: '',
          redeemed_at: 0,
          credited: 0,
        });
        // The lookup is written last, so a code is never found before its record is whole.
        await this.redis.set(`${this.prefix}rch:${hash}`, id, 'NX');
        await this.redis.sadd(`${this.prefix}rcs`, id);
        return { ...c, id, created, redeemedBy: null, redeemedAt: null, credited: false };
      }),
    );
  }

  async listCodes(): Promise<RedemptionCode[]> {
    const ids = await this.redis.smembers(`${this.prefix}rcs`);
    const records = await Promise.all(ids.map(async (id) => [id, await this.redis.hgetall(this.codeKey(id))] as const));
    return records
      .filter(([, h]) => h.created !== undefined)
      .map(([id, h]) => parseCode(id, h))
      .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  }

  async claimCode(hash: string, accountId: string): Promise<ClaimResult> {
    const id = await this.redis.get(`${this.prefix}rch:${hash}`);
    if (id === null) return { kind: 'unknown' };
    const [tag, ...flat] = (await this.run.tmCodeClaim([this.codeKey(id)], [accountId])) as string[];
    switch (tag) {
      case 'claimed':
      case 'resumed':
        return { kind: 'claimed', code: parseCode(id, pairs(flat)), resumed: tag === 'resumed' };
      case 'used':
      case 'expired':
      case 'unknown':
        return { kind: tag };
    }
    throw new Error(`CODE_CLAIM replied ${String(tag)}`);
  }

  async markCredited(codeId: string): Promise<void> {
    await this.run.tmCodeCredited([this.codeKey(codeId)], []);
  }

  async recordCheckout(c: NewCheckout): Promise<void> {
    const key = this.checkoutKey(c.sessionId);
    const fields = { account_id: c.accountId, product_id: c.productId, tokens: c.tokens, valid_days: c.validDays ?? 0 };
    await this.redis
      .multi()
      .hset(key, { ...fields, amount: c.amount, currency: c.currency, created: Math.floor(Date.now() / 1000) })
      .expire(key, CHECKOUT_RECORD_DAYS * 86_400)
      .exec();
  }

  async getCheckout(sessionId: string): Promise<CheckoutRecord | undefined> {
    const h = await this.redis.hgetall(this.checkoutKey(sessionId));
    if (h.created === undefined) return undefined;
    const validDays = Number(h.valid_days ?? 0);
    return {
      sessionId,
      accountId: h.account_id ?? '',
      productId: h.product_id ?? '',
      tokens: Number(h.tokens),
      validDays: validDays > 0 ? validDays : null,
      amount: Number(h.amount),
      currency: h.currency ?? '',
      created: Number(h.created),
    };
  }

  /** The connection is shared with the main store, which closes it. */
  async close(): Promise<void> {}
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

function parseProduct(id: string, h: Record<string, string>): Product {
  const validDays = Number(h.valid_days ?? 0);
  return {
    id,
    name: h.name ?? '',
    tokens: Number(h.tokens),
    validDays: validDays > 0 ? validDays : null,
    price: Number(h.price),
    currency: h.currency ?? '',
    active: h.active === '1',
    created: Number(h.created),
  };
}

function parseCode(id: string, h: Record<string, string>): RedemptionCode {
  const validDays = Number(h.valid_days ?? 0);
  const expiresAt = Number(h.expires_at ?? 0);
  const redeemedAt = Number(h.redeemed_at ?? 0);
  return {
    id,
    productId: h.product_id ? h.product_id : null,
    tokens: Number(h.tokens),
    validDays: validDays > 0 ? validDays : null,
    expiresAt: expiresAt > 0 ? expiresAt : null,
    created: Number(h.created),
    redeemedBy: h.redeemed_by ? h.redeemed_by : null,
    redeemedAt: redeemedAt > 0 ? redeemedAt : null,
    credited: h.credited === '1',
  };
}
