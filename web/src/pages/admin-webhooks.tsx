/**
 * Operators: webhook endpoints (made here with their signing secret shown once), each endpoint's deliveries with
 * their attempts, redelivery by hand of one that ended, and deleting an endpoint after a confirmation.
 */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page-props';
import { api } from '../api';
import type { CreateWebhookRequest, DeliveryObject, NewWebhookEndpointObject, WebhookEndpointObject } from '../api-types';
import { date, isoTime, shortDateTime } from '../format';
import { DangerMenu } from '../danger-menu';
import { ListTable, type Column } from '../list-table';
import { Empty, ErrorNote, Field, Loaded, PageTitle, formValue, useAction, useResource } from '../ui';

const endpointColumns: Column<WebhookEndpointObject>[] = [
  {
    label: 'Endpoint',
    cell: (e) => (
      <>
        <span class="url">{e.url}</span>
        <br />
        <code class="id muted" title={e.id}>
          {e.id}
        </code>
      </>
    ),
  },
  { label: 'Events', cell: (e) => e.events.join(', ') },
  { label: 'Created', class: 'nowrap', minor: true, cell: (e) => date(e.created) },
];

const when = (at: number) => (
  <time class="nowrap" dateTime={isoTime(at)} title={isoTime(at)}>
    {shortDateTime(at)}
  </time>
);

/** The last attempt's outcome in words: the receiver's status, or why there was none. */
function lastAttempt(d: DeliveryObject): string {
  const last = d.attempts[d.attempts.length - 1];
  if (!last) return 'not tried yet';
  return last.error ?? `HTTP ${last.status}`;
}

const deliveryColumns: Column<DeliveryObject>[] = [
  {
    label: 'Event',
    cell: (d) => (
      <>
        {d.type}
        <br />
        <code class="id muted">{d.event_id}</code>
      </>
    ),
  },
  { label: 'Queued', cell: (d) => when(d.created) },
  { label: 'Status', cell: (d) => <span class={`status ${d.status}`}>{d.status}</span> },
  {
    label: 'Attempts',
    cell: (d) => (
      <>
        {d.attempts.length} ({lastAttempt(d)})
        {d.next_attempt !== null && d.attempts.length > 0 && (
          <>
            <br />
            <span class="muted">next {shortDateTime(d.next_attempt)}</span>
          </>
        )}
      </>
    ),
  },
];

function Deliveries({ endpoint }: { endpoint: WebhookEndpointObject }) {
  const [deliveries, reload] = useResource(() => api.admin.deliveries(endpoint.id), [endpoint.id]);
  const action = useAction();
  const redeliver = (d: DeliveryObject) => void action.run(async () => (await api.admin.redeliver(d.id), reload()));
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries to {endpoint.url}</h2>
      <button type="button" class="secondary" onClick={reload}>
        Refresh
      </button>
      {action.error && <ErrorNote message={action.error} />}
      <Loaded resource={deliveries} what="the deliveries">
        {(list) =>
          list.length === 0 ? (
            <Empty>No deliveries yet.</Empty>
          ) : (
            <ListTable
              columns={deliveryColumns}
              rows={list}
              rowKey={(d) => d.id}
              actions={(d) =>
                d.status !== 'pending' && (
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => redeliver(d)}>
                    Redeliver <span class="visually-hidden">{d.event_id}</span>
                  </button>
                )
              }
            />
          )
        }
      </Loaded>
    </section>
  );
}

/** The new endpoint's signing secret, shown once. */
function SecretPanel(props: { secret: string; done: () => void }) {
  const { secret, done } = props;
  return (
    <section class="panel secret" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret of the new endpoint</h2>
      <p class="warning">
        <strong>Copy it now: it will not be shown again.</strong> The receiver checks each delivery's signature with it.
      </p>
      <div class="secret-row">
        <label for="webhook-secret" class="visually-hidden">
          Signing secret
        </label>
        <input id="webhook-secret" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      </div>
      <button type="button" class="secondary" onClick={done}>
        I have stored it
      </button>
    </section>
  );
}

/** An endpoint's deliveries, and deleting it: in its row's menu, after a confirmation. */
function EndpointActions(props: { endpoint: WebhookEndpointObject; shown: boolean; show: () => void; onDeleted: () => void }) {
  const { endpoint, shown, show, onDeleted } = props;
  const action = useAction();
  const remove = () =>
    action.run(async () => {
      await api.admin.deleteWebhook(endpoint.id);
      onDeleted();
    });
  return (
    <div class="buttons">
      <button type="button" class="secondary" aria-pressed={shown} onClick={show}>
        Deliveries <span class="visually-hidden">to {endpoint.url}</span>
      </button>
      <DangerMenu
        subject={endpoint.url}
        item="Delete"
        question="Delete it? Nothing more is sent to it, and its deliveries' history goes with it."
        confirm="Delete endpoint"
        confirmName={`Confirm deleting the endpoint ${endpoint.url}`}
        busy={action.busy}
        run={remove}
      />
      {action.error && <ErrorNote message={action.error} />}
    </div>
  );
}

export function AdminWebhooks(_props: PageProps) {
  const [endpoints, reload] = useResource(() => api.admin.webhooks());
  const [created, setCreated] = useState<NewWebhookEndpointObject>();
  const [shown, setShown] = useState<WebhookEndpointObject>();
  const action = useAction();

  const create = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const events = formValue(form, 'events')
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    void action.run(async () => {
      // The API checks the types and answers with a message naming the known ones.
      setCreated(await api.admin.createWebhook({ url: formValue(form, 'url'), events: events as CreateWebhookRequest['events'] }));
      form.reset();
      reload();
    });
  };

  return (
    <>
      <PageTitle title="Webhooks">Webhooks</PageTitle>
      {created ? (
        <SecretPanel secret={created.secret} done={() => setCreated(undefined)} />
      ) : (
        <form class="panel grid-form" onSubmit={create} aria-labelledby="new-webhook-title">
          <h2 id="new-webhook-title">New endpoint</h2>
          <Field label="URL" id="webhook-url" name="url" type="url" required placeholder="https://billing.example.com/hooks" />
          <Field
            label="Events"
            id="webhook-events"
            name="events"
            defaultValue="*"
            hint="Comma-separated types; * for every type but usage.settled."
          />
          {action.error && <ErrorNote message={action.error} />}
          <div>
            <button type="submit" disabled={action.busy}>
              {action.busy ? 'Creating…' : 'Create endpoint'}
            </button>
          </div>
        </form>
      )}

      <h2>Endpoints</h2>
      <Loaded resource={endpoints} what="the webhook endpoints">
        {(list) =>
          list.length === 0 ? (
            <Empty>No webhook endpoints yet.</Empty>
          ) : (
            <ListTable
              columns={endpointColumns}
              rows={list}
              rowKey={(e) => e.id}
              actions={(e) => (
                <EndpointActions
                  endpoint={e}
                  shown={shown?.id === e.id}
                  show={() => setShown(e)}
                  onDeleted={() => {
                    if (shown?.id === e.id) setShown(undefined);
                    reload();
                  }}
                />
              )}
            />
          )
        }
      </Loaded>
      {shown && <Deliveries endpoint={shown} />}
    </>
  );
}
