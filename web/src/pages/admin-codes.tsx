/** Operators: generate a batch of redemption codes (downloaded once, as a text file) and see each code's status. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page-props';
import { api } from '../api';
import type { CodeObject, GeneratedCodeObject, ProductObject } from '../api-types';
import { downloadText } from '../download';
import { counted, date, endOfDay, isoTime, shortDateTime, tokens } from '../format';
import { ListTable, type Column } from '../list-table';
import { Empty, ErrorNote, Field, Loaded, Named, Notice, PageTitle, formValue, useAction, useResource, type Resource } from '../ui';

/** The codes' columns; a code's product reads by its name where the catalog has it. */
function codeColumns(products: ProductObject[]): Column<CodeObject>[] {
  const productName = new Map(products.map((p) => [p.id, p.name]));
  return [
    {
      label: 'Code id',
      cell: (c) => (
        <>
          <code class="id" title={c.id}>
            {c.id}
          </code>
          {c.product_id && (
            <>
              <br />
              <span class="muted">
                <Named name={productName.get(c.product_id)} id={c.product_id} />
              </span>
            </>
          )}
        </>
      ),
    },
    { label: 'Tokens', cell: (c) => tokens(c.tokens) },
    {
      label: 'Created',
      class: 'nowrap',
      cell: (c) => (
        <>
          {date(c.created)}
          {c.expires_at !== null && (
            <>
              <br />
              <span class="muted">until {date(c.expires_at)}</span>
            </>
          )}
        </>
      ),
    },
    { label: 'Status', cell: (c) => <span class={`status ${c.status}`}>{c.status}</span> },
    {
      label: 'Redeemed by',
      cell: (c) =>
        c.redeemed_by === null ? (
          '—'
        ) : (
          <>
            <Named name={c.redeemed_by_email} id={c.redeemed_by} />
            {c.redeemed_at !== null && (
              <>
                <br />
                <time class="muted nowrap" dateTime={isoTime(c.redeemed_at)} title={isoTime(c.redeemed_at)}>
                  on {shortDateTime(c.redeemed_at)}
                </time>
              </>
            )}
          </>
        ),
    },
  ];
}

/** The form that generates a batch: for a product, or for a token amount with its validity. */
function GenerateForm(props: {
  products: Resource<ProductObject[]>;
  action: ReturnType<typeof useAction>;
  onSubmit: (event: SubmitEvent) => void;
}) {
  const { products, action, onSubmit } = props;
  return (
    <form class="panel grid-form" onSubmit={onSubmit} aria-labelledby="generate-title">
      <h2 id="generate-title">Generate codes</h2>
      <div class="field">
        <label for="code-product">Product</label>
        <select id="code-product" name="product_id">
          <option value="">A token amount (below)</option>
          {products.state === 'ready' &&
            products.data.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({counted(p.tokens, 'token')})
              </option>
            ))}
        </select>
      </div>
      <Field label="Tokens" id="code-tokens" name="tokens" type="number" min={1} step={1} hint="When no product is chosen." />
      <Field
        label="Valid for (days)"
        id="code-days"
        name="valid_days"
        type="number"
        min={1}
        step={1}
        hint="Of the package, after redemption."
      />
      <Field label="How many" id="code-count" name="count" type="number" min={1} max={1000} step={1} required defaultValue="10" />
      <Field label="Redeemable until" id="code-expires" name="expires" type="date" hint="Optional." />
      {action.error && <ErrorNote message={action.error} />}
      <div>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Generating…' : 'Generate'}
        </button>
      </div>
    </form>
  );
}

export function AdminCodes(_props: PageProps) {
  const [codes, reload] = useResource(() => api.admin.codes());
  const [products] = useResource(() => api.admin.products());
  const [batch, setBatch] = useState<GeneratedCodeObject[]>();
  const [downloaded, setDownloaded] = useState(false);
  const action = useAction();

  const generate = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const product = formValue(form, 'product_id');
    const days = formValue(form, 'valid_days');
    const expires = endOfDay(formValue(form, 'expires'));
    void action.run(async () => {
      const made = await api.admin.generateCodes({
        count: Number(formValue(form, 'count')),
        ...(product
          ? { product_id: product }
          : { tokens: Number(formValue(form, 'tokens')), ...(days ? { valid_days: Number(days) } : {}) }),
        ...(expires !== undefined ? { expires_at: expires } : {}),
      });
      setBatch(made);
      setDownloaded(false);
      reload();
    });
  };
  // The codes exist only here until the download; then they are dropped, as the server keeps only their hashes.
  const download = () => {
    if (!batch) return;
    downloadText(`redemption-codes-${new Date().toISOString().slice(0, 10)}.txt`, batch.map((c) => c.code).join('\n') + '\n');
    setBatch(undefined);
    setDownloaded(true);
  };

  return (
    <>
      <PageTitle title="Redemption codes">Redemption codes</PageTitle>
      {batch ? (
        <section class="panel secret" aria-labelledby="batch-title">
          <h2 id="batch-title">{counted(batch.length, 'code')} generated</h2>
          <p class="warning">
            <strong>Download them now: they are shown only this once.</strong> The server keeps only their hashes.
          </p>
          <button type="button" onClick={download}>
            Download codes (.txt)
          </button>
        </section>
      ) : (
        <GenerateForm products={products} action={action} onSubmit={generate} />
      )}
      {downloaded && <Notice>The codes were downloaded. Hand them out; each works once.</Notice>}

      <h2>Codes</h2>
      <Loaded resource={codes} what="the codes">
        {(list) =>
          list.length === 0 ? (
            <Empty>No codes yet.</Empty>
          ) : (
            <ListTable columns={codeColumns(products.state === 'ready' ? products.data : [])} rows={list} rowKey={(c) => c.id} />
          )
        }
      </Loaded>
    </>
  );
}
