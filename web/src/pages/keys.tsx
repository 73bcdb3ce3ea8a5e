/** API keys: the account's keys, creating one (its secret shown once, with a copy button), revoking with confirmation. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { PageProps } from '../app';
import { api } from '../api';
import type { CreatedKey, KeyObject } from '../api-types';
import { dateTime, endOfDay, nowSeconds, tokens } from '../format';
import { Empty, ErrorNote, Field, Loaded, Notice, PageTitle, formValue, useAction, useResource } from '../ui';

function status(k: KeyObject): string {
  if (k.revoked_at !== null) return 'revoked';
  if (k.expires_at !== null && k.expires_at <= nowSeconds()) return 'expired';
  return 'active';
}

export function Keys(_props: PageProps) {
  const [keys, reload] = useResource(() => api.keys());
  const [created, setCreated] = useState<CreatedKey>();
  return (
    <>
      <PageTitle title="API keys">API keys</PageTitle>
      <p>Each key spends this account's balance. Use it as the bearer token of the OpenAI API at this server's /v1.</p>
      {created ? (
        <NewSecret created={created} onDone={() => setCreated(undefined)} />
      ) : (
        <CreateKey
          onCreated={(k) => {
            setCreated(k);
            reload();
          }}
        />
      )}
      <h2>Your keys</h2>
      <Loaded resource={keys} what="your keys">
        {(list) =>
          list.length === 0 ? (
            <Empty>No keys yet. Create one above to call the API.</Empty>
          ) : (
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Spent</th>
                  <th scope="col">Cap</th>
                  <th scope="col">Models</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {[...list]
                  .sort((a, b) => b.created - a.created)
                  .map((k) => (
                    <KeyRow key={k.id} k={k} onRevoked={reload} />
                  ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </>
  );
}

function KeyRow({ k, onRevoked }: { k: KeyObject; onRevoked: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  // Focus follows the question and its answer, so keyboard users land on the button that replaced the one they pressed.
  const confirmButton = useRef<HTMLButtonElement>(null);
  const revokeButton = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
    else if (asked.current) revokeButton.current?.focus();
    asked.current ||= confirming;
  }, [confirming]);
  const state = status(k);
  const revoke = () =>
    action.run(async () => {
      await api.revokeKey(k.id);
      setConfirming(false);
      onRevoked();
    });
  return (
    <tr class={state !== 'active' ? 'inactive' : undefined}>
      <td data-label="Name">{k.name || <span class="muted">(no name)</span>}</td>
      <td data-label="Prefix">
        <code>{k.prefix}…</code>
      </td>
      <td data-label="Created">{dateTime(k.created)}</td>
      <td data-label="Last used">{k.last_used ? dateTime(k.last_used) : 'never'}</td>
      <td data-label="Spent">{tokens(k.spent)}</td>
      <td data-label="Cap">{k.limit_tokens === null ? 'none' : tokens(k.limit_tokens)}</td>
      <td data-label="Models">{k.models === null ? 'all' : k.models.join(', ')}</td>
      <td data-label="Status">
        <span class={`status ${state}`}>{state}</span>
        {k.expires_at !== null && state === 'active' && <span class="muted"> until {dateTime(k.expires_at)}</span>}
      </td>
      <td data-label="Actions">
        {state !== 'revoked' &&
          (confirming ? (
            <div class="confirm" role="group" aria-label={`Confirm revoking ${k.name || k.prefix}`}>
              <span>Revoke it? Requests with this key fail at once.</span>
              <button type="button" class="danger" onClick={revoke} disabled={action.busy} ref={confirmButton}>
                Revoke key
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </div>
          ) : (
            <button
              type="button"
              class="secondary"
              onClick={() => setConfirming(true)}
              aria-label={`Revoke ${k.name || k.prefix}`}
              ref={revokeButton}
            >
              Revoke
            </button>
          ))}
        {action.error && <ErrorNote message={action.error} />}
      </td>
    </tr>
  );
}

function CreateKey({ onCreated }: { onCreated: (k: CreatedKey) => void }) {
  const action = useAction();
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const models = formValue(form, 'models')
      .split(/[\s,]+/)
      .filter(Boolean);
    const cap = formValue(form, 'limit_tokens');
    const expires = endOfDay(formValue(form, 'expires'));
    void action.run(async () => {
      const created = await api.createKey({
        name: formValue(form, 'name'),
        ...(expires !== undefined ? { expires_at: expires } : {}),
        ...(models.length > 0 ? { models } : {}),
        ...(cap !== '' ? { limit_tokens: Number(cap) } : {}),
      });
      form.reset();
      onCreated(created);
    });
  };
  return (
    <form onSubmit={submit} class="panel grid-form" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <Field label="Name" name="name" required maxLength={200} hint="To tell your keys apart, e.g. the app that uses it." />
      <Field label="Expires on" name="expires" type="date" hint="Optional; the key stops working after this day (UTC)." />
      <Field label="Models" name="models" hint="Optional; model ids separated by commas. Empty: every model." />
      <Field
        label="Spending cap (tokens)"
        name="limit_tokens"
        type="number"
        min={1}
        step={1}
        hint="Optional; the most this key may ever spend."
      />
      {action.error && <ErrorNote message={action.error} />}
      <div>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
    </form>
  );
}

/** The secret, this once: held only in this component's state, never stored or put in a URL. */
function NewSecret({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed'>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <section class="panel secret" aria-labelledby="secret-title">
      <h2 id="secret-title">Your new key “{created.name}”</h2>
      <p class="warning">
        <strong>Copy it now: it will not be shown again.</strong> Store it somewhere safe; anyone with it can spend this account's tokens.
      </p>
      <div class="secret-row">
        <label for="new-secret" class="visually-hidden">
          Secret of the new key
        </label>
        <input id="new-secret" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      {copied === 'yes' && <Notice>Copied to the clipboard.</Notice>}
      {copied === 'failed' && <ErrorNote message="The browser did not allow copying; select the key and copy it by hand." />}
      <button type="button" class="secondary" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}
