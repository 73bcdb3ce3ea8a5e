/** The product center for account holders: the active products (no login), redeeming a code, Stripe Checkout. */
import { Router, type Request, type RequestHandler } from 'express';
import type Stripe from 'stripe';
import { apiError, sendError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import type { Logger } from '../observability/logger';
import { redeemCode } from '../products/redeem';
import { createCheckout } from '../products/stripe-checkout';
import type { AccountStore } from '../store/ports/account-store';
import type { CommerceStore } from '../store/ports/commerce-store';
import { MAX_UNSPENT_TOKENS } from '../store/records/account';
import { checkoutRequest, packageObject, productObject, redeemRequest, type CheckoutObject, type ShopObject } from '../api';
import type { StoreGuard } from '../http/store-guard';
import { sessionAccount } from './session-auth';

const NOT_CREDITABLE = apiError(
  'invalid_request_error',
  `Invalid 'code': its tokens would take this account past ${MAX_UNSPENT_TOKENS} unspent tokens; spend some first.`,
  'code',
);

export interface CommerceRoutesDeps {
  store: AccountStore;
  commerce: CommerceStore;
  logger: Logger;
  guard: StoreGuard;
  requireSession: RequestHandler;
  /** Unset: no Checkout (the route answers 404). */
  stripe: Stripe | undefined;
}

export function commerceRoutes(deps: CommerceRoutesDeps): Router {
  const { store, commerce, logger, guard, requireSession } = deps;
  const router = Router();

  router.get(
    '/products',
    guard(async (_req, res) => {
      const data = (await commerce.listProducts()).filter((p) => p.active).map(productObject);
      // Whether the products can be bought by card here, so the console shows a Buy button only where it works.
      const answer: ShopObject = { data, checkout: deps.stripe !== undefined };
      res.json(answer);
    }),
  );

  router.post(
    '/redeem',
    requireSession,
    guard(async (req, res) => {
      const parsed = redeemRequest.safeParse(req.body ?? {});
      if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
      const account = sessionAccount(res);
      const result = await redeemCode({ store, commerce }, account.id, parsed.data.code);
      switch (result.kind) {
        case 'redeemed':
          logger.info({ accountId: account.id, packageId: result.package.id, tokens: result.package.tokens }, 'code redeemed');
          return void res.status(201).json(packageObject(result.package));
        case 'used':
          return sendError(res, apiError('redemption_code_used', 'This code has already been redeemed.', 'code'));
        case 'expired':
          return sendError(res, apiError('redemption_code_expired', 'This code has expired.', 'code'));
        case 'unknown':
          return sendError(res, apiError('redemption_code_invalid', 'This is not a valid code: check it and try again.', 'code'));
        case 'account_not_found':
          return sendError(res, apiError('session_required', 'Log in first: this route needs a console session.'));
        case 'not_creditable':
          return sendError(res, NOT_CREDITABLE);
      }
    }),
  );

  const stripe = deps.stripe;
  if (stripe) {
    router.post(
      '/checkout',
      requireSession,
      guard(async (req, res) => {
        const parsed = checkoutRequest.safeParse(req.body ?? {});
        if (!parsed.success) return sendError(res, invalidRequest(parsed.error));
        const product = await commerce.getProduct(parsed.data.product_id);
        if (!product?.active) {
          return sendError(res, apiError('not_found', `No product for sale with id '${parsed.data.product_id}'.`, 'product_id'));
        }
        const account = sessionAccount(res);
        let url: string | null;
        try {
          url = await createCheckout(stripe, commerce, { product, account, origin: originOf(req) });
        } catch (err) {
          logger.error({ err: (err as Error).message, accountId: account.id }, 'stripe checkout could not be created');
          return sendError(res, apiError('upstream_error', 'The payment provider could not start a checkout; try again shortly.'));
        }
        if (!url) return sendError(res, apiError('upstream_error', 'The payment provider returned no checkout page.'));
        logger.info({ accountId: account.id, productId: product.id }, 'checkout started');
        const answer: CheckoutObject = { url };
        res.json(answer);
      }),
    );
  }
  return router;
}

/** This site's origin as the browser sees it (https behind a trusted proxy that says so). */
function originOf(req: Request): string {
  return `${req.protocol}://${req.host}`;
}
