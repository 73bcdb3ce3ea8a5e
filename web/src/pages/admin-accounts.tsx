/** Operators: find accounts, see their balance, disable or enable them, and grant a package of tokens. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api } from '../api';
import type { AccountListItem } from '../api-types';
import { date, endOfDay, tokens } from '../format';
import { Empty, ErrorNote, Field, Loaded, Notice, PageTitle, formValue, useAction, useResource } from '../ui';

const PAGE = 50;

export function AdminAccounts({ me }: PageProps) {
  const [search, setSearch] = useState('');
  const [accounts, reload] = useResource(() => api.admin.accounts({ search: search || undefined, limit: PAGE }), [search]);
  const [more, setMore] = useState<AccountListItem[]>([]);
  const [hasMore, setHasMore] = useState<boolean>();
  const paging = useAction();

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    setMore([]);
    setHasMore(undefined);
    setSearch(formValue(event.currentTarget as HTMLFormElement, 'search'));
  };
  const loadMore = (after: string) =>
    paging.run(async () => {
      const page = await api.admin.accounts({ search: search || undefined, after, limit: PAGE });
      setMore((old) => [...old, ...page.data]);
      setHasMore(page.has_more);
    });

  return (
    <>
      <PageTitle title="Accounts">Accounts</PageTitle>
      <form class="inline-form search" role="search" onSubmit={submit}>
        <Field label="Search by email or name" name="search" type="search" />
        <button type="submit">Search</button>
      </form>
      <Loaded resource={accounts} what="the accounts">
        {(first) => {
          const shown = [...first.data, ...more];
          if (shown.length === 0) return <Empty>{search ? `No account matches “${search}”.` : 'No accounts yet.'}</Empty>;
          return (
            <>
              <table class="list">
                <thead>
                  <tr>
                    <th scope="col">Account</th>
                    <th scope="col">Role</th>
                    <th scope="col">Balance</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {shown.map((a) => (
                    <AccountRow key={a.id} account={a} self={a.id === me.id} onChanged={reload} />
                  ))}
                </tbody>
              </table>
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

function AccountRow({ account: a, self, onChanged }: { account: AccountListItem; self: boolean; onChanged: () => void }) {
  // The list has no balances; each row asks for its account's.
  const [detail, reloadDetail] = useResource(() => api.admin.account(a.id), [a.id]);
  const action = useAction();
  const [granting, setGranting] = useState(false);
  const [granted, setGranted] = useState<string>();
  const who = a.email ?? (a.name || a.id);
  const toggle = () =>
    action.run(async () => {
      await api.admin.setStatus(a.id, a.status === 'active' ? 'disabled' : 'active');
      onChanged();
    });
  const grant = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const amount = Number(formValue(form, 'tokens'));
    const expires = endOfDay(formValue(form, 'expires'));
    void action.run(async () => {
      await api.admin.grant(a.id, { tokens: amount, ...(expires !== undefined ? { expires_at: expires } : {}) });
      setGranting(false);
      setGranted(`Granted ${tokens(amount)} tokens to ${who}.`);
      reloadDetail();
    });
  };
  return (
    <tr class={a.status === 'disabled' ? 'inactive' : undefined}>
      <td data-label="Account">
        <strong>{a.email ?? '(no email: API only)'}</strong>
        {a.name && <span> · {a.name}</span>}
        <br />
        <span class="muted">
          <code>{a.id}</code> since {date(a.created)}
        </span>
      </td>
      <td data-label="Role">{a.role}</td>
      <td data-label="Balance">
        <Loaded resource={detail} what="the balance">
          {(d) => (
            <>
              {tokens(d.balance)}
              {d.reserved > 0 && <span class="muted"> ({tokens(d.reserved)} reserved)</span>}
            </>
          )}
        </Loaded>
      </td>
      <td data-label="Status">
        <span class={`status ${a.status}`}>{a.status}</span>
      </td>
      <td data-label="Actions">
        <div class="buttons">
          {!self && (
            <button
              type="button"
              class={a.status === 'active' ? 'danger' : 'secondary'}
              onClick={toggle}
              disabled={action.busy}
              aria-label={`${a.status === 'active' ? 'Disable' : 'Enable'} ${who}`}
            >
              {a.status === 'active' ? 'Disable' : 'Enable'}
            </button>
          )}
          <button
            type="button"
            class="secondary"
            onClick={() => setGranting(!granting)}
            aria-expanded={granting}
            aria-label={`Grant tokens to ${who}`}
          >
            Grant tokens
          </button>
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
      </td>
    </tr>
  );
}
