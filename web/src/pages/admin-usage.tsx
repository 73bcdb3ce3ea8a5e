/** The operator's usage overview: every account's ledger, filterable by account, key, model and dates. */
import type { PageProps } from '../page-props';
import { api } from '../api';
import { Ledger } from '../ledger';
import { Loaded, PageTitle, useResource } from '../ui';

export function AdminUsage(_props: PageProps) {
  const [models] = useResource(() => api.models());
  return (
    <>
      <PageTitle title="All usage">All usage</PageTitle>
      <p>Every account's requests, newest first.</p>
      <Loaded resource={models} what="the models">
        {(list) => <Ledger fetchPage={api.admin.usage} accounts models={list.map((m) => m.id)} filename="tokenmeter-usage-all.csv" />}
      </Loaded>
    </>
  );
}
