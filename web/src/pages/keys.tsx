/**
 * API keys: the account's keys first; "Create key" opens the form in a dialog, which then shows the new secret once
 * (with a copy button); revoking asks for confirmation.
 */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page-props';
import { api } from '../api';
import type { CreatedOwnKeyObject, OwnKeyObject } from '../api-types';
import { isoTime, nowSeconds, shortDateTime, tokens } from '../format';
import { DangerMenu } from '../danger-menu';
import { ListTable, type Column } from '../list-table';
import { CopyButton } from '../copy-button';
import { Modal } from '../modal';
import { CreateKey } from './key-form';
import { Empty, ErrorNote, Loaded, PageTitle, useAction, useResource } from '../ui';

function status(k: OwnKeyObject): string {
  if (k.revoked_at !== null) return 'revoked';
  if (k.expires_at !== null && k.expires_at <= nowSeconds()) return 'expired';
  return 'active';
}

/** A key's rate limits in a few words: "60 requests/min, 10,000 tokens/min, 2 at once", or "none". */
export function limitsText(limits: OwnKeyObject['limits']): string {
  if (limits === null) return 'none';
  const parts: string[] = [];
  if (limits.rpm !== undefined) parts.push(`${tokens(limits.rpm)} requests/min`);
  if (limits.tpm !== undefined) parts.push(`${tokens(limits.tpm)} tokens/min`);
  if (limits.max_concurrent !== undefined) parts.push(`${tokens(limits.max_concurrent)} at once`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** A budget and its period's use: "1,200 of 10,000 this day", or "none". */
export function budgetText(budget: OwnKeyObject['budget']): string {
  if (budget === null) return 'none';
  return `${tokens(budget.spent + budget.reserved)} of ${tokens(budget.tokens)} this ${budget.period}`;
}

/** A time in the keys' table: short, the exact time in its title. */
const when = (t: number) => (
  <time dateTime={isoTime(t)} title={isoTime(t)}>
    {shortDateTime(t)}
  </time>
);

const COLUMNS: Column<OwnKeyObject>[] = [
  { label: 'Name', cell: (k) => k.name || <span class="muted">(no name)</span> },
  {
    label: 'Prefix',
    class: 'nowrap',
    cell: (k) => <code>{k.prefix}…</code>,
  },
  { label: 'Created', class: 'nowrap', minor: true, cell: (k) => when(k.created) },
  { label: 'Last used', class: 'nowrap', cell: (k) => (k.last_used ? when(k.last_used) : 'never') },
  { label: 'Spent', cell: (k) => tokens(k.spent) },
  { label: 'Cap', minor: true, cell: (k) => (k.limit_tokens === null ? 'none' : tokens(k.limit_tokens)) },
  {
    label: 'Budget',
    minor: true,
    // When it renews, in the title: the table has no room for another time.
    cell: (k) => <span title={k.budget ? `renews ${isoTime(k.budget.resets_at)}` : undefined}>{budgetText(k.budget)}</span>,
  },
  { label: 'Models', minor: true, cell: (k) => (k.models === null ? 'all' : k.models.join(', ')) },
  { label: 'Limits', minor: true, cell: (k) => limitsText(k.limits) },
  {
    label: 'Status',
    cell: (k) => {
      const state = status(k);
      return (
        <>
          <span class={`status ${state}`}>{state}</span>
          {k.expires_at !== null && state === 'active' && (
            <span class="muted">
              {' '}
              until <span class="nowrap">{when(k.expires_at)}</span>
            </span>
          )}
        </>
      );
    },
  },
];

export function Keys(_props: PageProps) {
  const [keys, reload] = useResource(() => api.keys());
  // The dialog shows the form, then the new key's secret in its place.
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<CreatedOwnKeyObject>();
  const close = () => {
    setOpen(false);
    setCreated(undefined);
  };
  return (
    <>
      <div class="title-row">
        <PageTitle title="API keys">API keys</PageTitle>
        <button type="button" onClick={() => setOpen(true)} aria-haspopup="dialog">
          Create key
        </button>
      </div>
      <p>Each key spends this account's balance. Use it as the bearer token of the OpenAI API at this server's /v1.</p>
      <Loaded resource={keys} what="your keys">
        {(list) =>
          list.length === 0 ? (
            <Empty>No keys yet. Create one with the Create key button to call the API.</Empty>
          ) : (
            <ListTable
              columns={COLUMNS}
              rows={[...list].sort((a, b) => b.created - a.created)}
              rowKey={(k) => k.id}
              rowClass={(k) => (status(k) !== 'active' ? 'inactive' : undefined)}
              actions={(k) => <KeyActions k={k} onRevoked={reload} />}
            />
          )
        }
      </Loaded>
      <Modal open={open} onClose={close} labelledBy="key-dialog-title" holdOpen={created !== undefined}>
        {created ? (
          <NewSecret created={created} onDone={close} />
        ) : (
          <CreateKey
            onCreated={(k) => {
              setCreated(k);
              reload();
            }}
            onCancel={close}
          />
        )}
      </Modal>
    </>
  );
}

/** Revoke the key: in its row's menu, after a confirmation. */
function KeyActions({ k, onRevoked }: { k: OwnKeyObject; onRevoked: () => void }) {
  const action = useAction();
  const name = k.name || k.prefix;
  const revoke = () =>
    action.run(async () => {
      await api.revokeKey(k.id);
      onRevoked();
    });
  return (
    <>
      {status(k) !== 'revoked' && (
        <DangerMenu
          subject={name}
          item="Revoke"
          question="Revoke it? Requests with this key fail at once."
          confirm="Revoke key"
          confirmName={`Confirm revoking ${name}`}
          busy={action.busy}
          run={revoke}
        />
      )}
      {action.error && <ErrorNote message={action.error} />}
    </>
  );
}

/** The secret, this once: held only in this component's state, never stored or put in a URL. */
function NewSecret({ created, onDone }: { created: CreatedOwnKeyObject; onDone: () => void }) {
  return (
    <section class="secret" aria-labelledby="key-dialog-title">
      <h2 id="key-dialog-title">Your new key “{created.name}”</h2>
      <p class="warning">
        <strong>Copy it now: it will not be shown again.</strong> Store it somewhere safe; anyone with it can spend this account's tokens.
      </p>
      <div class="secret-row">
        <label for="new-secret" class="visually-hidden">
          Secret of the new key
        </label>
        <input id="new-secret" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={created.key} />
      </div>
      <button type="button" class="secondary" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}
