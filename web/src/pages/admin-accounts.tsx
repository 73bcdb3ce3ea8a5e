/** Operators: find accounts, see their balance, disable or enable them, and grant a package of tokens. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api } from '../api';
import type { AccountDetail } from '../api-types';
import { date, endOfDay, tokens } from '../format';
import { Empty, ErrorNote, Field, Loaded, Notice, PageTitle, formValue, useAction, useResource } from '../ui';

export function AdminAccounts({ me }: PageProps) {
  const [accounts, reload] = useResource(() => api.admin.accounts());
  const [search, setSearch] = useState('');
  const needle = search.trim().toLowerCase();
  return (
    <>
      <PageTitle title="Accounts">Accounts</PageTitle>
      <div class="field search">
        <label for="account-search">Search by email, name or id</label>
        <input id="account-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
      </div>
      <Loaded resource={accounts} what="the accounts">
        {(list) => {
          const shown = list.filter((a) => !needle || [a.email, a.name, a.id].some((s) => s.toLowerCase().includes(needle)));
          if (list.length === 0) return <Empty>No accounts yet.</Empty>;
          if (shown.length === 0) return <Empty>No account matches “{search}”.</Empty>;
          return (
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
          );
        }}
      </Loaded>
    </>
  );
}

function AccountRow({ account: a, self, onChanged }: { account: AccountDetail; self: boolean; onChanged: () => void }) {
  const action = useAction();
  const [granting, setGranting] = useState(false);
  const [granted, setGranted] = useState<string>();
  const who = a.email || a.name || a.id;
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
      onChanged();
    });
  };
  return (
    <tr class={a.status === 'disabled' ? 'inactive' : undefined}>
      <td data-label="Account">
        <strong>{a.email || '(no email)'}</strong>
        {a.name && <span> · {a.name}</span>}
        <br />
        <span class="muted">
          <code>{a.id}</code> since {date(a.created)}
        </span>
      </td>
      <td data-label="Role">{a.role}</td>
      <td data-label="Balance">
        {tokens(a.balance)}
        {a.reserved > 0 && <span class="muted"> ({tokens(a.reserved)} reserved)</span>}
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
