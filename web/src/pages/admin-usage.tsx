/** The operator's usage overview: every account's ledger, filterable by account, key, model and dates. */
import type { PageProps } from '../page-props';
import { api } from '../api';
import { Ledger } from '../ledger';
import { PageTitle } from '../ui';

export function AdminUsage(_props: PageProps) {
  return (
    <>
      <PageTitle title="All usage">All usage</PageTitle>
      <p>Every account's requests, newest first.</p>
      <Ledger fetchPage={api.admin.usage} accounts filename="tokenmeter-usage-all.csv" />
    </>
  );
}
