/**
 * The operator's side of the product center, under /admin (behind ADMIN_TOKEN) and /console/api/admin (behind an
 * admin session): products, and redemption codes (shown once at creation, never again).
 */
import express, { Router } from 'express';
import { z } from 'zod';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import type { Logger } from '../observability/logger';
import type { AccountStore } from '../store/ports/account-store';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { RedemptionCode } from '../store/records/commerce';
import { productObject } from '../console-api/objects';
import { storeGuard } from '../console-api/store-guard';
import { newId } from '../store/ids';
import { generateCode } from './codes';

const tokens = z
  .number({ error: 'must be a whole number of tokens' })
  .int('must be a whole number of tokens')
  .positive('must be at least 1')
  .max(Number.MAX_SAFE_INTEGER);
const validDays = z.number({ error: 'must be a whole number of days' }).int('must be a whole number of days').min(1).max(36_500);
const price = z.number({ error: 'must be a whole number in the currency’s smallest unit' }).int().nonnegative().max(99_999_999);
const currency = z
  .string({ error: 'must be an ISO 4217 code' })
  .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code such as usd')
  .transform((c) => c.toLowerCase());

const createProductSchema = z.strictObject({
  id: z
    .string({ error: 'must be a string' })
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 lower-case letters, digits, - or _')
    .optional(),
  name: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200),
  tokens,
  valid_days: validDays.nullish(),
  price,
  currency: currency.default('usd'),
  active: z.boolean({ error: 'must be true or false' }).default(true),
});

const patchProductSchema = z.strictObject({
  name: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200).optional(),
  tokens: tokens.optional(),
  valid_days: validDays.nullish(),
  price: price.optional(),
  currency: currency.optional(),
  active: z.boolean({ error: 'must be true or false' }).optional(),
});

const createCodesSchema = z
  .strictObject({
    product_id: z.string({ error: 'must be a product id' }).min(1).optional(),
    tokens: tokens.optional(),
    valid_days: validDays.nullish(),
    count: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(1000, 'must be at most 1000')
      .default(1),
    expires_at: z
      .number({ error: 'must be a Unix time in seconds' })
      .int('must be a Unix time in seconds')
      .refine((t) => t > Date.now() / 1000, 'must be in the future')
      .nullish(),
  })
  .refine((b) => (b.product_id === undefined) !== (b.tokens === undefined), {
    message: 'give either product_id or tokens (with valid_days if the package should expire)',
    path: ['product_id'],
  })
  .refine((b) => b.product_id === undefined || b.valid_days == null, {
    message: 'a product’s codes take its valid_days',
    path: ['valid_days'],
  });

/** A code as the operator lists it: its state and who redeemed it, never the code. */
export interface CodeObject {
  id: string;
  product_id: string | null;
  tokens: number;
  valid_days: number | null;
  expires_at: number | null;
  created: number;
  status: 'active' | 'redeemed' | 'expired';
  redeemed_by: string | null;
  /** The redeeming account's email, so a person reads who it was (null: not redeemed, or an account without one). */
  redeemed_by_email: string | null;
  redeemed_at: number | null;
}

export function codeObject(c: RedemptionCode, redeemerEmail: string | null = null, now = Math.floor(Date.now() / 1000)): CodeObject {
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

/** The codes as listed, each redeemer's email read once (one batch for the whole list, not one request per code). */
async function listedCodes(codes: RedemptionCode[], store: Pick<AccountStore, 'getAccounts'>): Promise<CodeObject[]> {
  const redeemers = [...new Set(codes.flatMap((c) => (c.redeemedBy === null ? [] : [c.redeemedBy])))];
  const accounts = await store.getAccounts(redeemers);
  const emails = new Map(redeemers.map((id, i) => [id, accounts[i]?.email ?? null]));
  return codes.map((c) => codeObject(c, c.redeemedBy === null ? null : (emails.get(c.redeemedBy) ?? null)));
}

export function productAdmin(deps: { commerce: CommerceStore; store: Pick<AccountStore, 'getAccounts'>; logger: Logger }): Router {
  const { commerce, store, logger } = deps;
  const guard = storeGuard(logger);
  const router = Router();
  router.use(['/products', '/redemption-codes'], express.json({ limit: '64kb', type: () => true }));
  const productNotFound = (id: string, param = 'id') => apiError('not_found', `No product with id '${id}'.`, param);

  router.post(
    '/products',
    guard(async (req, res) => {
      const parsed = createProductSchema.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const p = parsed.data;
      const id = p.id ?? newId('prod');
      const created = await commerce.createProduct({
        id,
        name: p.name,
        tokens: p.tokens,
        validDays: p.valid_days ?? null,
        price: p.price,
        currency: p.currency,
        active: p.active,
      });
      if (created.kind === 'id_taken') return sendError(res, apiError('invalid_request_error', `A product with id '${id}' exists.`, 'id'));
      logger.info({ productId: id }, 'product created');
      res.status(201).json(productObject(created.product));
    }),
  );

  router.get(
    '/products',
    guard(async (_req, res) => {
      res.json({ data: (await commerce.listProducts()).map(productObject) });
    }),
  );

  router.patch(
    '/products/:id',
    guard(async (req, res) => {
      const id = String(req.params.id);
      const parsed = patchProductSchema.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const p = parsed.data;
      const updated = await commerce.updateProduct(id, {
        name: p.name,
        tokens: p.tokens,
        validDays: p.valid_days,
        price: p.price,
        currency: p.currency,
        active: p.active,
      });
      if (!updated) return sendError(res, productNotFound(id));
      logger.info({ productId: id }, 'product updated');
      res.json(productObject(updated));
    }),
  );

  router.post(
    '/redemption-codes',
    guard(async (req, res) => {
      const parsed = createCodesSchema.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const b = parsed.data;
      let what = { productId: null as string | null, tokens: b.tokens ?? 0, validDays: b.valid_days ?? null };
      if (b.product_id !== undefined) {
        const product = await commerce.getProduct(b.product_id);
        if (!product) return sendError(res, productNotFound(b.product_id, 'product_id'));
        what = { productId: product.id, tokens: product.tokens, validDays: product.validDays };
      }
      const secrets = Array.from({ length: b.count }, generateCode);
      const codes = await commerce.createCodes(secrets.map((s) => ({ hash: s.hash, ...what, expiresAt: b.expires_at ?? null })));
      logger.info({ count: codes.length, productId: what.productId, tokens: what.tokens }, 'redemption codes created');
      res.status(201).json({ data: codes.map((c, i) => ({ ...codeObject(c), code: secrets[i].code })) });
    }),
  );

  router.get(
    '/redemption-codes',
    guard(async (_req, res) => {
      res.json({ data: await listedCodes(await commerce.listCodes(), store) });
    }),
  );

  return router;
}
