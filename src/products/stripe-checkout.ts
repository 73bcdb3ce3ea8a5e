/**
 * Stripe Checkout (only when STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set): the client, and the Checkout
 * Session the console starts for a product. Stripe's webhook (src/webhooks/stripe-webhook.ts) credits the package once
 * the payment is in, from the metadata written here.
 */
import Stripe from 'stripe';
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
