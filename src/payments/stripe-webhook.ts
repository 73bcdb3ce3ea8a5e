/**
 * `POST /webhooks/stripe`: Stripe's word that a Checkout Session was paid. The signature is checked by the stripe
 * package on the raw body; a signature only says Stripe sent the event, not that this proxy sold it, so only a session
 * recorded when this proxy created it is credited, only with what its record says, and only when the amount paid is
 * the price it was sold at. The credit's once-id is the Checkout Session's id, so however often Stripe retries an
 * event (or sends both `completed` and `async_payment_succeeded`), the package is credited once.
 */
import express, { Router, type Request, type Response } from 'express';
import type Stripe from 'stripe';
import { apiError, sendError } from '../http/errors';
import type { StoreGuard } from '../http/store-guard';
import type { Logger } from '../observability/logger';
import { creditOnce } from '../products/grants';
import type { AccountStore } from '../store/ports/account-store';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { CheckoutRecord } from '../store/records/commerce';

const PAID_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/** A metadata count exactly as this proxy writes it: decimal digits, no sign, exponent, hex, fraction or padding. */
function strictCount(value: string | undefined): number | undefined {
  if (value === undefined || !/^(0|[1-9]\d{0,15})$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Why a paid session is not what this proxy sold (metadata changed, another amount paid), or undefined when it is. */
function mismatch(session: Stripe.Checkout.Session, sold: CheckoutRecord): string | undefined {
  const meta = session.metadata ?? {};
  if (meta.account_id !== sold.accountId || meta.product_id !== sold.productId) return 'metadata names another account or product';
  const validDays = meta.valid_days === '' ? null : strictCount(meta.valid_days);
  if (strictCount(meta.tokens) !== sold.tokens || validDays !== sold.validDays) return 'metadata is not the package sold';
  if (session.amount_total !== sold.amount || session.currency !== sold.currency) return 'the amount paid is not the price';
  return undefined;
}

/** Reads the raw body itself, as the signature is over the exact bytes Stripe sent. */
export function stripeWebhook(deps: {
  stripe: Stripe;
  webhookSecret: string;
  store: Pick<AccountStore, 'grantPackage'>;
  commerce: Pick<CommerceStore, 'getCheckout'>;
  logger: Logger;
  guard: StoreGuard;
}): Router {
  const { stripe, store, commerce, logger, guard } = deps;
  const router = Router();
  router.post(
    '/',
    express.raw({ type: () => true, limit: '1mb' }),
    guard(async (req: Request, res: Response) => {
      let event: Stripe.Event;
      try {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        event = stripe.webhooks.constructEvent(body, req.headers['stripe-signature'] ?? '', deps.webhookSecret);
      } catch {
        logger.warn('stripe webhook refused: bad signature');
        return sendError(res, apiError('invalid_signature', 'The Stripe-Signature header does not match this body.'));
      }
      // Other events, and whatever fails below, are not for retrying: Stripe is told the event arrived, and the log
      // says why nothing was credited.
      const ignore = () => void res.json({ received: true, ignored: true });
      if (!PAID_EVENTS.has(event.type)) return ignore();
      const session = event.data.object as Stripe.Checkout.Session;
      if (session.payment_status !== 'paid') return ignore();
      const context = { sessionId: session.id, eventId: event.id };
      const sold = await commerce.getCheckout(session.id);
      if (!sold) {
        logger.error(context, 'stripe checkout this proxy did not create; nothing credited');
        return ignore();
      }
      const problem = mismatch(session, sold);
      if (problem) {
        logger.error({ ...context, accountId: sold.accountId, problem }, 'stripe checkout is not what was sold; nothing credited');
        return ignore();
      }
      const credit = await creditOnce(store, sold.accountId, sold, `stripe:${session.id}`);
      if (credit.kind === 'account_not_found') {
        logger.error({ ...context, accountId: sold.accountId }, 'stripe payment for an account that does not exist; nothing credited');
        return ignore();
      }
      if (credit.kind === 'not_creditable') {
        // The operator refunds it (or credits it by hand once the account spent some).
        logger.error({ ...context, accountId: sold.accountId, reason: credit.reason }, 'stripe payment not creditable');
        return ignore();
      }
      logger.info(
        { ...context, accountId: sold.accountId, packageId: credit.package.id, duplicate: credit.duplicate },
        credit.duplicate ? 'stripe payment already credited' : 'stripe payment credited',
      );
      res.json({ received: true });
    }),
  );
  return router;
}
