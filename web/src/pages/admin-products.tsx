/** Operators: the product catalog — create a token package for sale, edit it, deactivate or reactivate it. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api } from '../api';
import type { ProductObject } from '../api-types';
import { money, tokens } from '../format';
import { Empty, ErrorNote, Field, Loaded, PageTitle, formValue, useAction, useResource } from '../ui';
import { validity } from './products';

type ProductInput = Omit<ProductObject, 'id' | 'active'>;

/** The product fields from a form; the price is typed in major units (12.50) and sent in minor units (1250). */
function productInput(form: HTMLFormElement): ProductInput {
  const days = formValue(form, 'valid_days');
  return {
    name: formValue(form, 'name'),
    tokens: Number(formValue(form, 'tokens')),
    valid_days: days === '' ? null : Number(days),
    price: Math.round(Number(formValue(form, 'price')) * 100),
    currency: formValue(form, 'currency').toLowerCase(),
  };
}

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
        label="Price"
        id={`${prefix}-price`}
        name="price"
        type="number"
        min={0}
        step={0.01}
        required
        defaultValue={product ? product.price / 100 : undefined}
      />
      <Field
        label="Currency"
        id={`${prefix}-currency`}
        name="currency"
        required
        pattern="[A-Za-z]{3}"
        defaultValue={product?.currency ?? 'usd'}
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
      <PageTitle title="Catalog">Products</PageTitle>
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
      <h2>Catalog</h2>
      <Loaded resource={products} what="the products">
        {(list) =>
          list.length === 0 ? (
            <Empty>No products yet. Create the first one above.</Empty>
          ) : (
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Product</th>
                  <th scope="col">Tokens</th>
                  <th scope="col">Price</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((p) => (
                  <ProductRow key={p.id} product={p} onChanged={reload} />
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </>
  );
}

function ProductRow({ product: p, onChanged }: { product: ProductObject; onChanged: () => void }) {
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
    <tr class={p.active ? undefined : 'inactive'}>
      <td data-label="Product">
        <strong>{p.name}</strong>
        <br />
        <code class="muted">{p.id}</code>
      </td>
      <td data-label="Tokens">
        {tokens(p.tokens)} <span class="muted">{validity(p.valid_days)}</span>
      </td>
      <td data-label="Price">{money(p.price, p.currency)}</td>
      <td data-label="Status">
        <span class={`status ${p.active ? 'active' : 'disabled'}`}>{p.active ? 'on sale' : 'inactive'}</span>
      </td>
      <td data-label="Actions">
        <div class="buttons">
          <button
            type="button"
            class="secondary"
            onClick={() => setEditing(!editing)}
            aria-expanded={editing}
            aria-label={`Edit ${p.name}`}
          >
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
      </td>
    </tr>
  );
}
