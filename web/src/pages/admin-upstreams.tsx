/**
 * Operators: the upstream pools (docs/upstream-pools.md) as GET /admin/upstreams shows them: each pool's models and
 * servers, with their load, health and last error, read again when the operator clicks Refresh.
 */
import type { PageProps } from '../page-props';
import { api } from '../api';
import type { UpstreamPoolObject } from '../api-types';
import { shortDateTime } from '../format';
import { ListTable, type Column } from '../list-table';
import { Empty, Loaded, PageTitle, useResource } from '../ui';

type Server = UpstreamPoolObject['servers'][number];

const when = (iso: string) => (
  <time class="nowrap" dateTime={iso} title={iso}>
    {shortDateTime(Math.floor(Date.parse(iso) / 1000))}
  </time>
);

/** Serving, failing its health check, or ejected by the outlier detector (until when). */
function state(s: Server) {
  if (s.ejected_until !== null) return <>ejected until {when(s.ejected_until)}</>;
  return <span class={s.healthy ? undefined : 'warning'}>{s.healthy ? 'healthy' : 'unhealthy'}</span>;
}

const serverColumns: Column<Server>[] = [
  { label: 'Server', cell: (s) => <span class="url">{s.url}</span> },
  { label: 'Weight', class: 'num', cell: (s) => String(s.weight) },
  {
    label: 'In flight',
    class: 'num nowrap',
    cell: (s) => (s.max_concurrent === null ? String(s.in_flight) : `${s.in_flight} / ${s.max_concurrent}`),
  },
  { label: 'State', cell: state },
  {
    label: 'Last error',
    cell: (s) =>
      s.last_error === null ? (
        <span class="muted">none</span>
      ) : (
        <>
          {s.last_error.message}
          <br />
          <span class="muted">{when(s.last_error.at)}</span>
        </>
      ),
  },
];

/** Requests a fallback model served instead of this pool, by why; said only when there were some. */
function Fallbacks({ counts }: { counts: UpstreamPoolObject['fallbacks'] }) {
  const parts = [
    counts.unhealthy > 0 && `${counts.unhealthy} because no server was healthy`,
    counts.failed > 0 && `${counts.failed} because every try failed`,
    counts.overloaded > 0 && `${counts.overloaded} because every server was busy`,
  ].filter(Boolean);
  if (parts.length === 0) return null;
  const total = counts.unhealthy + counts.failed + counts.overloaded;
  return (
    <p role="status" class="warning">
      Served by a fallback model since start: {total} {total === 1 ? 'request' : 'requests'} ({parts.join(', ')}).
    </p>
  );
}

function Pool({ pool, index }: { pool: UpstreamPoolObject; index: number }) {
  const id = `pool-${index}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{pool.name}</h2>
      <p>
        Models: {pool.models.length === 0 ? 'none' : pool.models.join(', ')}. Retries: {pool.retries}.
        {pool.affinity !== null && ` Affinity: ${pool.affinity}.`}
      </p>
      <Fallbacks counts={pool.fallbacks} />
      <ListTable columns={serverColumns} rows={pool.servers} rowKey={(s) => s.url} />
    </section>
  );
}

export function AdminUpstreams(_props: PageProps) {
  const [pools, reload] = useResource(() => api.admin.upstreams(), []);
  return (
    <>
      <PageTitle title="Upstreams">Upstreams</PageTitle>
      <p>The model servers behind each upstream: their load, health and last error, as of the last refresh.</p>
      <button type="button" class="secondary" onClick={reload}>
        Refresh
      </button>
      <Loaded resource={pools} what="the upstreams">
        {(list) => (list.length === 0 ? <Empty>No upstreams.</Empty> : list.map((p, i) => <Pool key={p.name} pool={p} index={i} />))}
      </Loaded>
    </>
  );
}
