/**
 * The account's overview: balance and reserved tokens, how to connect a client, its packages (expiring ones marked),
 * and 30 days of use.
 */
import { useEffect } from 'preact/hooks';
import type { PageProps } from '../page-props';
import { api } from '../api';
import type { PackageObject } from '../api-types';
import { DailyChart } from '../daily-chart';
import { counted, date, expiresSoon, nowSeconds, shortDateTime, tokens } from '../format';
import { ListTable, type Column } from '../list-table';
import { Link } from '../router';
import { ConnectCard } from './connect-card';
import { budgetText } from './keys';
import { Empty, Loaded, PageTitle, useResource } from '../ui';

const PACKAGE_COLUMNS: Column<PackageObject>[] = [
  {
    label: 'Granted',
    cell: (p) => (
      <>
        {tokens(p.tokens)} on {date(p.created)}
      </>
    ),
  },
  { label: 'Remaining', cell: (p) => tokens(p.remaining) },
  {
    label: 'Expires',
    cell: (p) => (
      <>
        {p.expires_at === null ? 'never' : date(p.expires_at)}
        {expiresSoon(p.expires_at) && <strong class="badge">expires soon</strong>}
      </>
    ),
  },
];

export function Overview({ me, refresh }: PageProps) {
  const [daily] = useResource(() => api.daily(30));
  // The balance moves with every request made elsewhere: fetch it afresh whenever the page opens.
  useEffect(() => void refresh(), []);
  const live = me.packages.filter((p) => p.remaining > 0 && (p.expires_at === null || p.expires_at > nowSeconds()));
  return (
    <>
      <PageTitle title="Overview">Overview</PageTitle>
      {me.status === 'disabled' && <p class="error">This account is disabled: its keys are refused. Contact the operator.</p>}
      <div class="cards">
        <div class={me.debt > 0 ? 'card warn' : 'card'}>
          <h2>Balance</h2>
          <p class="big" data-testid="balance">
            {tokens(me.balance)} <span class="unit">tokens</span>
          </p>
          {me.debt > 0 && <p>in debt</p>}
        </div>
        <div class="card">
          <h2>Reserved</h2>
          <p class="big">
            {tokens(me.reserved)} <span class="unit">tokens</span>
          </p>
          <p class="muted">held by requests in progress</p>
        </div>
        {me.budget && (
          <div class="card">
            <h2>Budget</h2>
            <p class="big">{budgetText(me.budget)}</p>
            <p class="muted">shared by all your keys; renews {shortDateTime(me.budget.resets_at)}</p>
          </div>
        )}
        {me.debt > 0 && (
          <div class="card warn">
            <h2>Debt</h2>
            <p class="big">
              {tokens(me.debt)} <span class="unit">tokens</span>
            </p>
            <p>Paid from your next package.</p>
          </div>
        )}
      </div>
      {me.debt > 0 ? (
        <p class="error" data-testid="debt">
          This account owes {counted(me.debt, 'token')}: answers cost more than their requests reserved. Your keys are refused until a
          package pays the debt off. <Link href="/console/products">Redeem a code or buy a package</Link>.
        </p>
      ) : (
        me.balance === 0 && (
          <p>
            You have no tokens yet. <Link href="/console/products">Redeem a code or buy a package</Link> to start.
          </p>
        )
      )}

      <ConnectCard />

      <h2>Packages</h2>
      {live.length === 0 ? (
        <Empty>No packages with tokens left.</Empty>
      ) : (
        <ListTable
          columns={PACKAGE_COLUMNS}
          rows={live}
          rowKey={(p) => p.id}
          rowClass={(p) => (expiresSoon(p.expires_at) ? 'soon' : undefined)}
        />
      )}

      <h2>Tokens charged per day</h2>
      <Loaded resource={daily} what="the daily usage">
        {(rows) => <DailyChart rows={rows} days={30} />}
      </Loaded>
    </>
  );
}
