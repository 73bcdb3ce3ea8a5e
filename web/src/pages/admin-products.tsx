/** Operators: the product catalog — create a token package for sale, edit it, deactivate or reactivate it. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page-props';
import { InputProblem, api } from '../api';
import type { ProductObject } from '../api-types';
import { fromMinorUnits, minorDigits, money, toMinorUnits, tokens } from '../format';
import { ListTable, type Column } from '../list-table';
import { Empty, ErrorNote, Field, Loaded, PageTitle, formValue, useAction, useResource } from '../ui';
import { validity } from './products';

type ProductInput = Omit<ProductObject, 'id' | 'active'>;

/**
 * The product fields from a form. A person thinks of a price as 12.50 dollars, so that is what the form takes (with
 * the currency beside it); the API, the CLI and Stripe count minor units (1250 cents), which this converts to on the
 * digits, exactly. An amount the currency cannot hold (12.505 dollars, 5.5 yen) is refused, not rounded.
 */
function productInput(form: HTMLFormElement): ProductInput {
  const days = formValue(form, 'valid_days');
  const currency = formValue(form, 'currency').toLowerCase();
  const typed = formValue(form, 'price');
  const price = toMinorUnits(typed, currency);
  if (price === undefined) {
    const digits = minorDigits(currency);
    const example = digits === 0 ? '500' : `12.${'5'.padEnd(digits, '0')}`;
    throw new InputProblem(
      `“${typed}” is not a price in ${currency.toUpperCase()}: give the amount with at most ${digits} decimal${digits === 1 ? '' : 's'}, such as ${example}.`,
    );
  }
  return {
    name: formValue(form, 'name'),
    tokens: Number(formValue(form, 'tokens')),
    valid_days: days === '' ? null : Number(days),
    price,
    currency,
  };
}

const COLUMNS: Column<ProductObject>[] = [
  {
    label: 'Product',
    cell: (p) => (
      <>
        <strong>{p.name}</strong>
        <br />
        <code class="id muted" title={p.id}>
          {p.id}
        </code>
      </>
    ),
  },
  {
    label: 'Tokens',
    cell: (p) => (
      <>
        {tokens(p.tokens)} <span class="muted">{validity(p.valid_days)}</span>
      </>
    ),
  },
  { label: 'Price', class: 'nowrap', cell: (p) => money(p.price, p.currency) },
  { label: 'Status', cell: (p) => <span class={`status ${p.active ? 'active' : 'disabled'}`}>{p.active ? 'on sale' : 'inactive'}</span> },
];

function ProductFields({ prefix, product }: { prefix: string; product?: ProductObject }) {
  return (
    <>
      <Field label="Name" id={`${prefix}-name`} name="name" required maxLength={200} defaultValue={product?.name} />
      <Field label="Tokens" id={`${prefix}-tokens`} name="tokens" type="number" min={1} step={1} required defaultValue={product?.tokens} />
      <Field
        label="Valid for (days)"
        id={`${prefix}-days`}
        name="valid_days"
        type="number"
        min={1}
        step={1}
        hint="Empty: never expires."
        defaultValue={product?.valid_days ?? undefined}
      />
      <Field
        label="Currency"
        id={`${prefix}-currency`}
        name="currency"
        required
        pattern="[A-Za-z]{3}"
        hint="Its ISO 4217 code: usd, eur, jpy…"
        defaultValue={product?.currency ?? 'usd'}
      />
      <Field
        label="Price"
        id={`${prefix}-price`}
        name="price"
        inputMode="decimal"
        autocomplete="off"
        required
        hint="In the currency’s main unit: 12.50 for $12.50 (the API and the CLI take cents: 1250)."
        defaultValue={product ? fromMinorUnits(product.price, product.currency) : undefined}
      />
    </>
  );
}

export function AdminProducts(_props: PageProps) {
  const [products, reload] = useResource(() => api.admin.products());
  const action = useAction();
  const create = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void action.run(async () => {
      await api.admin.createProduct({ ...productInput(form), active: true });
      form.reset();
      reload();
    });
  };
  return (
    <>
      <PageTitle title="Products">Products</PageTitle>
      <form class="panel grid-form" onSubmit={create} aria-labelledby="new-product-title">
        <h2 id="new-product-title">New product</h2>
        <ProductFields prefix="new" />
        {action.error && <ErrorNote message={action.error} />}
        <div>
          <button type="submit" disabled={action.busy}>
            Create product
          </button>
        </div>
      </form>
      <h2>All products</h2>
      <Loaded resource={products} what="the products">
        {(list) =>
          list.length === 0 ? (
            <Empty>No products yet. Create the first one above.</Empty>
          ) : (
            <ListTable
              columns={COLUMNS}
              rows={list}
              rowKey={(p) => p.id}
              rowClass={(p) => (p.active ? undefined : 'inactive')}
              actions={(p) => <ProductActions product={p} onChanged={reload} />}
            />
          )
        }
      </Loaded>
    </>
  );
}

/** Edit the product (its fields in a form under the buttons), deactivate or activate it. */
function ProductActions({ product: p, onChanged }: { product: ProductObject; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const save = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void action.run(async () => {
      await api.admin.updateProduct(p.id, productInput(form));
      setEditing(false);
      onChanged();
    });
  };
  const toggle = () =>
    action.run(async () => {
      await api.admin.updateProduct(p.id, { active: !p.active });
      onChanged();
    });
  return (
    <>
      <div class="buttons">
        <button type="button" class="secondary" onClick={() => setEditing(!editing)} aria-expanded={editing} aria-label={`Edit ${p.name}`}>
          Edit
        </button>
        <button
          type="button"
          class="secondary"
          onClick={toggle}
          disabled={action.busy}
          aria-label={`${p.active ? 'Deactivate' : 'Activate'} ${p.name}`}
        >
          {p.active ? 'Deactivate' : 'Activate'}
        </button>
      </div>
      {editing && (
        <form class="stack" onSubmit={save} aria-label={`Edit ${p.name}`}>
          <ProductFields prefix={`edit-${p.id}`} product={p} />
          <button type="submit" disabled={action.busy}>
            Save
          </button>
        </form>
      )}
      {action.error && <ErrorNote message={action.error} />}
    </>
  );
}
