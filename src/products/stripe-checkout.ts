/**
 * Stripe Checkout (only when STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set): the client, and the Checkout
 * Session the console starts for a product, recorded in the commerce store. Stripe's webhook
 * (src/payments/stripe-webhook.ts) credits the package once the payment is in, only for a session recorded here and
 * only with what its record says.
 */
import Stripe from 'stripe';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { Product } from '../store/records/commerce';

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

/**
 * Creates a Checkout Session for one product and records it (what it sells, to whom, at what price) before its page
 * is given out: the webhook credits nothing else. The metadata repeats the record, for the dashboard and as a check.
 */
export async function createCheckout(
  stripe: Stripe,
  commerce: Pick<CommerceStore, 'recordCheckout'>,
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
  await commerce.recordCheckout({
    sessionId: session.id,
    accountId: account.id,
    productId: product.id,
    tokens: product.tokens,
    validDays: product.validDays,
    amount: product.price,
    currency: product.currency,
  });
  return session.url;
}
