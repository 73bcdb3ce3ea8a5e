/**
 * `POST /webhooks/stripe`: Stripe's word that a Checkout Session was paid. The signature is checked by the stripe
 * package on the raw body; the credit's once-id is the Checkout Session's id, so however often Stripe retries an event
 * (or sends both `completed` and `async_payment_succeeded`), the package is credited once.
 */
import express, { Router, type Request, type Response } from 'express';
import type Stripe from 'stripe';
import { apiError, sendError } from '../http/errors';
import type { StoreGuard } from '../http/store-guard';
import type { Logger } from '../observability/logger';
import { creditOnce } from '../products/grants';
import type { AccountStore } from '../store/ports/account-store';

const PAID_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/** Reads the raw body itself, as the signature is over the exact bytes Stripe sent. */
export function stripeWebhook(deps: {
  stripe: Stripe;
  webhookSecret: string;
  store: Pick<AccountStore, 'grantPackage'>;
  logger: Logger;
  guard: StoreGuard;
}): Router {
  const { stripe, store, logger, guard } = deps;
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
      if (!PAID_EVENTS.has(event.type)) return void res.json({ received: true, ignored: true });
      const session = event.data.object as Stripe.Checkout.Session;
      if (session.payment_status !== 'paid') return void res.json({ received: true, ignored: true });
      const meta = session.metadata ?? {};
      const tokens = Number(meta.tokens);
      const validDays = meta.valid_days ? Number(meta.valid_days) : null;
      if (!meta.account_id || !Number.isSafeInteger(tokens) || tokens <= 0 || (validDays !== null && !Number.isSafeInteger(validDays))) {
        // Not a session this proxy made: retrying cannot help, so Stripe is told it arrived.
        logger.error({ sessionId: session.id, eventId: event.id }, 'stripe checkout without our metadata; nothing credited');
        return void res.json({ received: true, ignored: true });
      }
      const credit = await creditOnce(store, meta.account_id, { tokens, validDays }, `stripe:${session.id}`);
      if (credit.kind === 'account_not_found') {
        logger.error(
          { sessionId: session.id, accountId: meta.account_id },
          'stripe payment for an account that does not exist; nothing credited',
        );
        return void res.json({ received: true, ignored: true });
      }
      if (credit.kind === 'not_creditable') {
        // Retrying cannot help either: the operator refunds it (or credits it by hand once the account spent some).
        logger.error({ sessionId: session.id, accountId: meta.account_id, reason: credit.reason }, 'stripe payment not creditable');
        return void res.json({ received: true, ignored: true });
      }
      logger.info(
        { sessionId: session.id, eventId: event.id, accountId: meta.account_id, packageId: credit.package.id, duplicate: credit.duplicate },
        credit.duplicate ? 'stripe payment already credited' : 'stripe payment credited',
      );
      res.json({ received: true });
    }),
  );
  return router;
}
