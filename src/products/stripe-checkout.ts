/**
 * Stripe Checkout (only when STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set): the console starts a Checkout
 * Session for a product, and Stripe's webhook credits the package once the payment is in. The webhook's signature is
 * checked by the stripe package on the raw body; the credit's once-id is the Checkout Session's id, so however often
 * Stripe retries an event (or sends both `completed` and `async_payment_succeeded`), the package is credited once.
 */
import express, { Router, type Request, type Response } from 'express';
import Stripe from 'stripe';
import { apiError, sendError } from '../http/errors';
import type { Logger } from '../observability/logger';
import type { AccountStore } from '../store/ports/account-store';
import type { Product } from '../store/records/commerce';
import { storeGuard } from '../console-api/store-guard';
import { creditOnce } from './grants';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** Where API calls go; unset: Stripe itself. */
  apiUrl: string | undefined;
}

/** Stripe's settings from the options: set only when both secrets are. */
export function stripeSettings(o: {
  stripeSecretKey?: string;
  stripeWebhookSecret?: string;
  stripeApiUrl?: string;
}): StripeSettings | undefined {
  if (!o.stripeSecretKey || !o.stripeWebhookSecret) return undefined;
  return { secretKey: o.stripeSecretKey, webhookSecret: o.stripeWebhookSecret, apiUrl: o.stripeApiUrl };
}

export function stripeClient(settings: StripeSettings): Stripe {
  const url = settings.apiUrl ? new URL(settings.apiUrl) : undefined;
  const protocol = url?.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(settings.secretKey, {
    maxNetworkRetries: 2,
    timeout: 15_000,
    ...(url && { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol }),
  });
}

/** Creates a Checkout Session for one product; the metadata is what the webhook will credit. */
export async function createCheckout(
  stripe: Stripe,
  input: { product: Product; account: { id: string; email: string | null }; origin: string },
): Promise<string | null> {
  const { product, account, origin } = input;
  const session = await stripe.checkout.sessions.create({
    mode: 'payment',
    line_items: [
      { quantity: 1, price_data: { currency: product.currency, unit_amount: product.price, product_data: { name: product.name } } },
    ],
    client_reference_id: account.id,
    ...(account.email && { customer_email: account.email }),
    metadata: {
      account_id: account.id,
      product_id: product.id,
      // The package as sold now: a product edited before the payment completes does not change what was bought.
      tokens: String(product.tokens),
      valid_days: product.validDays === null ? '' : String(product.validDays),
    },
    success_url: `${origin}/console/?checkout=success`,
    cancel_url: `${origin}/console/?checkout=cancelled`,
  });
  return session.url;
}

const PAID_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/** `POST /webhooks/stripe`: reads the raw body itself, as the signature is over the exact bytes Stripe sent. */
export function stripeWebhook(deps: {
  stripe: Stripe;
  webhookSecret: string;
  store: Pick<AccountStore, 'grantPackage'>;
  logger: Logger;
}): Router {
  const { stripe, store, logger } = deps;
  const guard = storeGuard(logger);
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
      logger.info(
        { sessionId: session.id, eventId: event.id, accountId: meta.account_id, packageId: credit.package.id, duplicate: credit.duplicate },
        credit.duplicate ? 'stripe payment already credited' : 'stripe payment credited',
      );
      res.json({ received: true });
    }),
  );
  return router;
}
