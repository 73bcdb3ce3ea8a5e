/** Where Stripe Checkout sends the buyer back: paid (the package arrives with Stripe's webhook) or cancelled. */
import type { PageProps } from '../page-props';
import { counted } from '../format';
import { Link, useLocation } from '../router';
import { PageTitle } from '../ui';

export function CheckoutResult({ me, refresh }: PageProps) {
  const { query } = useLocation();
  const cancelled = query.get('checkout') === 'cancelled';
  if (cancelled) {
    return (
      <>
        <PageTitle title="Payment cancelled">Payment cancelled</PageTitle>
        <p>
          Nothing was charged. You can choose a package again under <Link href="/console/products">Buy tokens</Link>.
        </p>
      </>
    );
  }
  return (
    <>
      <PageTitle title="Thank you">Thank you for your purchase</PageTitle>
      <p>Your payment went through. The tokens are added as soon as Stripe confirms it to us, usually within a few seconds.</p>
      <p>
        Balance now: <strong>{counted(me.balance, 'token')}</strong>.{' '}
        <button type="button" class="secondary" onClick={() => void refresh()}>
          Check again
        </button>
      </p>
      <p>
        <Link href="/console/">Back to the overview</Link>
      </p>
    </>
  );
}
