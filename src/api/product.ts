/** A product of the product center: a token package for sale, as everyone reads it and the operator makes it. */
import { z } from 'zod';
import type { Product } from '../store/records/commerce';
import { grantAmount, list, tokenCount } from './fields';

export const productSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  tokens: tokenCount,
  /** Days the package stays usable after purchase; null: it does not expire. */
  valid_days: z.number().int().positive().nullable(),
  /** In the currency's smallest unit (cents for USD), as Stripe counts it. */
  price: tokenCount,
  /** ISO 4217, lower case (`usd`). */
  currency: z.string(),
  active: z.boolean(),
});
export type ProductObject = z.infer<typeof productSchema>;

export function productObject(p: Product): ProductObject {
  return { id: p.id, name: p.name, tokens: p.tokens, valid_days: p.validDays, price: p.price, currency: p.currency, active: p.active };
}

/** `GET /admin/products`: every product, active or not. */
export const productListSchema = list(productSchema);

/** `GET /console/api/products`: the products for sale, and whether Stripe Checkout is configured to buy them. */
export const shopSchema = productListSchema.extend({ checkout: z.boolean() });
export type ShopObject = z.infer<typeof shopSchema>;

/** How long a package stays usable, in days. */
export const validDays = z.number({ error: 'must be a whole number of days' }).int('must be a whole number of days').min(1).max(36_500);

const price = z.number({ error: 'must be a whole number in the currency’s smallest unit' }).int().nonnegative().max(99_999_999);
const currency = z
  .string({ error: 'must be an ISO 4217 code' })
  .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code such as usd')
  .transform((c) => c.toLowerCase());
const productName = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200);
const active = z.boolean({ error: 'must be true or false' });

/** `POST /admin/products`: `id` is generated when omitted. */
export const createProductRequest = z.strictObject({
  id: z
    .string({ error: 'must be a string' })
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 lower-case letters, digits, - or _')
    .optional(),
  name: productName,
  tokens: grantAmount,
  valid_days: validDays.nullish(),
  price,
  currency: currency.default('usd'),
  active: active.default(true),
});
export type CreateProductRequest = z.input<typeof createProductRequest>;

/** `PATCH /admin/products/:id`: any field but the id. */
export const patchProductRequest = z.strictObject({
  name: productName.optional(),
  tokens: grantAmount.optional(),
  valid_days: validDays.nullish(),
  price: price.optional(),
  currency: currency.optional(),
  active: active.optional(),
});
export type PatchProductRequest = z.input<typeof patchProductRequest>;

/** `POST /console/api/checkout`. */
export const checkoutRequest = z.strictObject({
  product_id: z.string({ error: 'must be a product id' }).min(1, 'must not be empty').max(100),
});
export const checkoutSchema = z.strictObject({ url: z.string() });
export type CheckoutObject = z.infer<typeof checkoutSchema>;
