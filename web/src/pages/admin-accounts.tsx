/** Operators: find accounts, see their balance, disable or enable them, and grant a package of tokens. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page-props';
import { api } from '../api';
import type { AccountListItemObject } from '../api-types';
import { counted, date, endOfDay, tokens } from '../format';
import { DangerMenu } from '../danger-menu';
import { ListTable, type Column } from '../list-table';
import { Empty, ErrorNote, Field, Loaded, Notice, PageTitle, formValue, useAction, useResource } from '../ui';

const PAGE = 50;

const COLUMNS: Column<AccountListItemObject>[] = [
  {
    label: 'Account',
    class: 'breakable',
    cell: (a) => (
      <>
        <strong class="email">{a.email ?? '(no email: API only)'}</strong>
        {a.name && <span> · {a.name}</span>}
        <br />
        <span class="muted">
          <code class="id" title={a.id}>
            {a.id}
          </code>{' '}
          since {date(a.created)}
        </span>
      </>
    ),
  },
  { label: 'Role', minor: true, cell: (a) => a.role },
  {
    label: 'Balance',
    cell: (a) => (
      <>
        {tokens(a.balance)}
        {a.reserved > 0 && <span class="muted"> ({tokens(a.reserved)} reserved)</span>}
        {a.debt > 0 && <span class="muted"> ({tokens(a.debt)} owed)</span>}
      </>
    ),
  },
  { label: 'Status', cell: (a) => <span class={`status ${a.status}`}>{a.status}</span> },
];

export function AdminAccounts({ me }: PageProps) {
  const [search, setSearch] = useState('');
  const [accounts] = useResource(() => api.admin.accounts({ search: search || undefined, limit: PAGE }), [search]);
  const [more, setMore] = useState<AccountListItemObject[]>([]);
  const [hasMore, setHasMore] = useState<boolean>();
  // An account read again after a change (disabled, granted), over the one the list carried.
  const [changed, setChanged] = useState<Record<string, AccountListItemObject>>({});
  const paging = useAction();

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    setMore([]);
    setHasMore(undefined);
    setChanged({});
    setSearch(formValue(event.currentTarget as HTMLFormElement, 'search'));
  };
  const loadMore = (after: string) =>
    paging.run(async () => {
      const page = await api.admin.accounts({ search: search || undefined, after, limit: PAGE });
      setMore((old) => [...old, ...page.data]);
      setHasMore(page.has_more);
    });
  const onChanged = (a: AccountListItemObject) => setChanged((old) => ({ ...old, [a.id]: a }));

  return (
    <>
      <PageTitle title="Accounts">Accounts</PageTitle>
      <form class="inline-form search" role="search" onSubmit={submit}>
        <Field label="Search by email or name" name="search" type="search" />
        <button type="submit">Search</button>
      </form>
      <Loaded resource={accounts} what="the accounts">
        {(first) => {
          const shown = [...first.data, ...more].map((a) => changed[a.id] ?? a);
          if (shown.length === 0) return <Empty>{search ? `No account matches “${search}”.` : 'No accounts yet.'}</Empty>;
          return (
            <>
              <ListTable
                columns={COLUMNS}
                rows={shown}
                rowKey={(a) => a.id}
                rowClass={(a) => (a.status === 'disabled' ? 'inactive' : undefined)}
                actions={(a) => <AccountActions account={a} self={a.id === me.id} onChanged={onChanged} />}
              />
              {(hasMore ?? first.has_more) && (
                <button type="button" class="secondary" disabled={paging.busy} onClick={() => void loadMore(shown[shown.length - 1].id)}>
                  {paging.busy ? 'Loading…' : 'Show more accounts'}
                </button>
              )}
              {paging.error && <ErrorNote message={paging.error} />}
            </>
          );
        }}
      </Loaded>
    </>
  );
}

/** Disable or enable the account, and grant it a package; after either, the account is read again (its row shows it). */
function AccountActions(props: { account: AccountListItemObject; self: boolean; onChanged: (a: AccountListItemObject) => void }) {
  const a = props.account;
  const action = useAction();
  const [granting, setGranting] = useState(false);
  const [granted, setGranted] = useState<string>();
  const who = a.email ?? (a.name || a.id);
  const setStatus = (status: 'active' | 'disabled') =>
    action.run(async () => {
      await api.admin.setStatus(a.id, status);
      props.onChanged(await api.admin.account(a.id));
    });
  const grant = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const amount = Number(formValue(form, 'tokens'));
    const expires = endOfDay(formValue(form, 'expires'));
    void action.run(async () => {
      await api.admin.grant(a.id, { tokens: amount, ...(expires !== undefined ? { expires_at: expires } : {}) });
      const updated = await api.admin.account(a.id);
      setGranting(false);
      props.onChanged(updated);
      setGranted(`Granted ${counted(amount, 'token')} to ${who}.`);
    });
  };
  return (
    <>
      <div class="buttons">
        <button
          type="button"
          class="secondary"
          onClick={() => setGranting(!granting)}
          aria-expanded={granting}
          aria-label={`Grant tokens to ${who}`}
        >
          Grant tokens
        </button>
        {/* Enabling undoes nothing: a button. Disabling stops the account's keys at once: in the menu, after a question. */}
        {!props.self && a.status !== 'active' && (
          <button
            type="button"
            class="secondary"
            onClick={() => void setStatus('active')}
            disabled={action.busy}
            aria-label={`Enable ${who}`}
          >
            Enable
          </button>
        )}
        {!props.self && a.status === 'active' && (
          <DangerMenu
            subject={who}
            item="Disable"
            question="Disable it? Its keys are refused at once, and it cannot sign in until enabled again."
            confirm="Disable account"
            confirmName={`Confirm disabling ${who}`}
            busy={action.busy}
            run={() => setStatus('disabled')}
          />
        )}
      </div>
      {granting && (
        <form class="inline-form" onSubmit={grant} aria-label={`Grant a package to ${who}`}>
          <Field label="Tokens" id={`grant-${a.id}-tokens`} name="tokens" type="number" min={1} step={1} required />
          <Field label="Expires on" id={`grant-${a.id}-expires`} name="expires" type="date" />
          <button type="submit" disabled={action.busy}>
            Grant
          </button>
        </form>
      )}
      {granted && <Notice>{granted}</Notice>}
      {action.error && <ErrorNote message={action.error} />}
    </>
  );
}
