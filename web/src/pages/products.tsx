/** Buy tokens (the product center): the token packages for sale, redeeming a code, and buying through Stripe Checkout. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page-props';
import { api, messageOf } from '../api';
import type { PackageObject, ProductObject } from '../api-types';
import { counted, date, money, tokens } from '../format';
import { Link } from '../router';
import { Empty, ErrorNote, Field, Loaded, Notice, PageTitle, formValue, useAction, useResource } from '../ui';

export function validity(days: number | null): string {
  return days === null ? 'never expires' : `valid ${days} day${days === 1 ? '' : 's'}`;
}

/** What a person with no packages to buy can do: an account holder asks the operator; the operator makes some. */
function NothingForSale({ operator }: { operator: boolean }) {
  if (operator) {
    return (
      <Empty>
        No token packages for sale yet. As the operator, create one under <Link href="/console/admin/products">Products</Link>, make
        redemption codes under <Link href="/console/admin/codes">Redemption codes</Link>, or grant tokens to an account under{' '}
        <Link href="/console/admin/accounts">Accounts</Link>.
      </Empty>
    );
  }
  return (
    <Empty>
      No token packages for sale yet. Ask the operator of this server for tokens: a redemption code (redeem it above) or a grant to your
      account.
    </Empty>
  );
}

export function Products({ me, refresh }: PageProps) {
  const [products] = useResource(() => api.products());
  return (
    <>
      <PageTitle title="Buy tokens">Buy tokens</PageTitle>
      <Redeem onRedeemed={refresh} />
      <h2>Token packages</h2>
      <Loaded resource={products} what="the products">
        {({ data: list, checkout: canBuy }) =>
          list.length === 0 ? (
            <NothingForSale operator={me.role === 'admin'} />
          ) : (
            <>
              {!canBuy && <p>Card payment is not set up on this server: ask the operator for a redemption code.</p>}
              <ul class="products">
                {list.map((p) => (
                  <ProductCard key={p.id} product={p} canBuy={canBuy} />
                ))}
              </ul>
            </>
          )
        }
      </Loaded>
    </>
  );
}

function ProductCard({ product, canBuy }: { product: ProductObject; canBuy: boolean }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const buy = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const { url } = await api.checkout(product.id);
      location.assign(url);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <li class="card product">
      <h3>{product.name}</h3>
      <p class="big">
        {tokens(product.tokens)} <span class="unit">tokens</span>
      </p>
      <p class="muted">{validity(product.valid_days)}</p>
      <p class="price">{money(product.price, product.currency)}</p>
      {canBuy && (
        <button type="button" onClick={buy} disabled={busy} aria-label={`Buy ${product.name}`}>
          {busy ? 'Opening checkout…' : 'Buy'}
        </button>
      )}
      {error && <ErrorNote message={error} />}
    </li>
  );
}

function Redeem({ onRedeemed }: { onRedeemed: () => Promise<void> }) {
  const action = useAction();
  const [redeemed, setRedeemed] = useState<PackageObject>();
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setRedeemed(undefined);
    void action.run(async () => {
      const pkg = await api.redeem(formValue(form, 'code'));
      form.reset();
      setRedeemed(pkg);
      await onRedeemed();
    });
  };
  return (
    <form onSubmit={submit} class="panel inline-form" aria-labelledby="redeem-title">
      <h2 id="redeem-title">Redeem a code</h2>
      <Field label="Code" name="code" required autocomplete="off" spellcheck={false} />
      <button type="submit" disabled={action.busy}>
        {action.busy ? 'Redeeming…' : 'Redeem'}
      </button>
      {action.error && <ErrorNote message={action.error} />}
      {redeemed && (
        <Notice>
          Added {counted(redeemed.tokens, 'token')} to your balance
          {redeemed.expires_at === null ? '.' : `, valid until ${date(redeemed.expires_at)}.`}
        </Notice>
      )}
    </form>
  );
}
