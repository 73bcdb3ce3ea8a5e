/** The account's usage: its ledger, newest first, filtered by key, model and dates, paged, downloadable as CSV. */
import type { PageProps } from '../page-props';
import { api } from '../api';
import { Ledger } from '../ledger';
import { Loaded, PageTitle, useResource } from '../ui';

export function UsagePage(_props: PageProps) {
  // Both filters are choices: the account's keys, and the models served (all a request could have used).
  const [choices] = useResource(() => Promise.all([api.keys(), api.models()]));
  return (
    <>
      <PageTitle title="Usage">Usage</PageTitle>
      <Loaded resource={choices} what="your keys and the models">
        {([list, models]) => {
          const names = new Map(list.map((k) => [k.id, k.name ? `${k.name} (${k.prefix}…)` : `${k.prefix}…`]));
          return (
            <Ledger
              fetchPage={api.usage}
              keys={list.map((k) => ({ id: k.id, label: names.get(k.id)! }))}
              models={models.map((m) => m.id)}
              keyName={(id) => names.get(id)}
              filename="tokenmeter-usage.csv"
            />
          );
        }}
      </Loaded>
    </>
  );
}
