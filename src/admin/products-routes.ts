/**
 * The operator's side of the product center: products, and redemption codes (shown once at creation, never again).
 */
import { Router } from 'express';
import type { GuardedHandler } from '../http/store-guard';
import {
  codeObject,
  createCodesRequest,
  createProductRequest,
  patchProductRequest,
  productObject,
  type CodeObject,
  type GeneratedCodeObject,
} from '../api';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import { generateCode } from '../products/codes';
import { newId } from '../store/ids';
import type { AccountStore } from '../store/ports/account-store';
import type { RedemptionCode } from '../store/records/commerce';
import { body, type AdminContext } from './admin-routes';

const productNotFound = (id: string, param = 'id') => apiError('not_found', `No product with id '${id}'.`, param);

/** The codes as listed, each redeemer's email read once (one batch for the whole list, not one request per code). */
async function listedCodes(codes: RedemptionCode[], store: Pick<AccountStore, 'getAccounts'>): Promise<CodeObject[]> {
  const redeemers = [...new Set(codes.flatMap((c) => (c.redeemedBy === null ? [] : [c.redeemedBy])))];
  const accounts = await store.getAccounts(redeemers);
  const emails = new Map(redeemers.map((id, i) => [id, accounts[i]?.email ?? null]));
  return codes.map((c) => codeObject(c, c.redeemedBy === null ? null : (emails.get(c.redeemedBy) ?? null)));
}

export function productsRoutes(ctx: AdminContext): Router {
  const { commerce, store, logger, guard } = ctx;
  const router = Router();

  router.post(
    '/products',
    guard(async (req, res) => {
      const parsed = createProductRequest.safeParse(body(req));
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
      const parsed = patchProductRequest.safeParse(body(req));
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

  router.post('/redemption-codes', guard(createCodes(ctx)));

  router.get(
    '/redemption-codes',
    guard(async (_req, res) => {
      res.json({ data: await listedCodes(await commerce.listCodes(), store) });
    }),
  );

  return router;
}

/** POST /admin/redemption-codes: a batch for a product or a number of tokens, each code shown this once. */
function createCodes(ctx: AdminContext): GuardedHandler {
  const { commerce, logger } = ctx;
  return async (req, res) => {
    const parsed = createCodesRequest.safeParse(body(req));
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
    const data: GeneratedCodeObject[] = codes.map((c, i) => ({ ...codeObject(c), code: secrets[i].code }));
    res.status(201).json({ data });
  };
}
