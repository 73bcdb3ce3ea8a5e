/** Redemption codes: as the operator lists and generates them (the code itself shown once), and as one is redeemed. */
import { z } from 'zod';
import type { RedemptionCode } from '../store/records/commerce';
import { futureTime, grantAmount, list, nowSeconds, tokenCount, unixTime } from './fields';
import { validDays } from './product';

/** A code's state and who redeemed it, never the code. */
export const codeSchema = z.strictObject({
  id: z.string(),
  product_id: z.string().nullable(),
  tokens: tokenCount,
  valid_days: z.number().int().nullable(),
  expires_at: unixTime.nullable(),
  created: unixTime,
  status: z.enum(['active', 'redeemed', 'expired']),
  redeemed_by: z.string().nullable(),
  /** The redeeming account's email, so a person reads who it was (null: not redeemed, or an account without one). */
  redeemed_by_email: z.string().nullable(),
  redeemed_at: unixTime.nullable(),
});
export type CodeObject = z.infer<typeof codeSchema>;

export function codeObject(c: RedemptionCode, redeemerEmail: string | null = null, now = nowSeconds()): CodeObject {
  const status = c.redeemedBy !== null ? 'redeemed' : c.expiresAt !== null && c.expiresAt <= now ? 'expired' : 'active';
  return {
    id: c.id,
    product_id: c.productId,
    tokens: c.tokens,
    valid_days: c.validDays,
    expires_at: c.expiresAt,
    created: c.created,
    status,
    redeemed_by: c.redeemedBy,
    redeemed_by_email: redeemerEmail,
    redeemed_at: c.redeemedAt,
  };
}

export const codeListSchema = list(codeSchema);

/** A code just generated: the only time the code itself is shown. */
export const generatedCodeSchema = codeSchema.extend({ code: z.string() });
export type GeneratedCodeObject = z.infer<typeof generatedCodeSchema>;

export const generatedCodeListSchema = list(generatedCodeSchema);

/** `POST /admin/redemption-codes`: for a product, or for a number of tokens (and how long they last). */
export const createCodesRequest = z
  .strictObject({
    product_id: z.string({ error: 'must be a product id' }).min(1).optional(),
    tokens: grantAmount.optional(),
    valid_days: validDays.nullish(),
    count: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(1000, 'must be at most 1000')
      .default(1),
    expires_at: futureTime.nullish(),
  })
  .refine((b) => (b.product_id === undefined) !== (b.tokens === undefined), {
    message: 'give either product_id or tokens (with valid_days if the package should expire)',
    path: ['product_id'],
  })
  .refine((b) => b.product_id === undefined || b.valid_days == null, {
    message: 'a product’s codes take its valid_days',
    path: ['valid_days'],
  });
export type CreateCodesRequest = z.input<typeof createCodesRequest>;

/** `POST /console/api/redeem`. */
export const redeemRequest = z.strictObject({
  code: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
});
