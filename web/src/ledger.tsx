/** The usage ledger as a filterable, paged table with a CSV download; shared by the account's and the operator's pages. */
import { useEffect, useState } from 'preact/hooks';
import type { UsageFilter } from './api';
import type { OperatorUsageObject, UsageObject } from './api-types';

/** A ledger row: the account holder's own record, or the operator's, which names who made it. */
type LedgerRecord = UsageObject & Partial<Pick<OperatorUsageObject, 'account_email' | 'key_name'>>;
import { downloadText } from './download';
import { counted, dateTimeWithZone, endOfDay, isoTime, startOfDay, tokens } from './format';
import { FilterForm } from './ledger-filters';
import { accountLookup, keyLookup } from './ledger-lookup';
import { ListTable, tableCsv, type Column } from './list-table';
import { Empty, ErrorNote, Named, formValue, useAction } from './ui';

const PAGE = 50;
/** The most rows one CSV download fetches (page by page). */
const CSV_MAX_ROWS = 20_000;

export interface LedgerProps {
  fetchPage: (filter: UsageFilter) => Promise<LedgerRecord[]>;
  /** Options for the key filter: id and label. */
  keys?: { id: string; label: string }[];
  /** Options for the model filter. */
  models: string[];
  /** Show an account filter and column (operators). */
  accounts?: boolean;
  /** A key's name by its id, where the records do not carry it (the account's own usage). */
  keyName?: (id: string) => string | undefined;
  filename: string;
}

type FetchPage = LedgerProps['fetchPage'];

/**
 * The `size` records just older than those shown (all of `shown` is newest first). `more` is false once the API had
 * no more to give. Within one ledger (an account's own, or the operator's view of one account or key) this reads
 * before the oldest shown record's cursor.
 */
export async function olderRecords(
  fetchPage: FetchPage,
  filter: UsageFilter,
  shown: LedgerRecord[],
  size: number,
  /** Whether the records may come from several accounts' ledgers (the operator's view, unfiltered). */
  acrossAccounts: boolean,
): Promise<{ records: LedgerRecord[]; more: boolean }> {
  const oldest = shown.at(-1);
  if (oldest && acrossAccounts) return olderAcrossAccounts(fetchPage, filter, shown, size);
  const page = await fetchPage({ ...filter, ...(oldest ? { before: oldest.cursor } : {}), limit: size });
  // The API answers oldest first; the table reads newest first.
  return { records: page.reverse(), more: page.length === size };
}

/**
 * The operator's view of every account: a cursor belongs to one account's ledger (another's may hold the same one),
 * so this pages by time instead: up to the oldest shown second, with room for the records of that second already
 * shown, which it drops.
 */
async function olderAcrossAccounts(
  fetchPage: FetchPage,
  filter: UsageFilter,
  shown: LedgerRecord[],
  size: number,
): Promise<{ records: LedgerRecord[]; more: boolean }> {
  const oldest = shown[shown.length - 1].created;
  const sameSecond = shown.filter((r) => r.created === oldest);
  const limit = Math.min(1000, size + sameSecond.length);
  const page = await fetchPage({ ...filter, until: oldest, limit });
  const seen = new Set(sameSecond.map((r) => r.request_id));
  const records = page.reverse().filter((r) => !seen.has(r.request_id));
  // A full page of nothing new would repeat forever: only more than `limit` records in one second can cause it.
  return { records, more: page.length === limit && records.length > 0 };
}

const sum = (rows: readonly LedgerRecord[], field: (r: LedgerRecord) => number) => rows.reduce((n, r) => n + field(r), 0);

/** The table's columns and the CSV's fields: the operator's view adds the account. */
function ledgerColumns(props: LedgerProps): Column<LedgerRecord>[] {
  const keyName = (r: LedgerRecord) => r.key_name || (r.key_id !== null ? props.keyName?.(r.key_id) : undefined);
  const operator = props.accounts === true;
  const account: Column<LedgerRecord> = {
    label: 'Account',
    cell: (r) => <Named name={r.account_email} id={r.account_id ?? '—'} />,
    csv: { account_id: (r) => r.account_id ?? '' },
  };
  // Last but the request id in the CSV: the columns before it keep their places.
  const accountEmail: Column<LedgerRecord> = { csv: { account_email: (r) => r.account_email ?? '' } };
  return [
    {
      label: 'Time',
      cell: (r) => (
        <time dateTime={isoTime(r.created)} title={isoTime(r.created)}>
          {dateTimeWithZone(r.created)}
        </time>
      ),
      csv: { time: (r) => isoTime(r.created) },
    },
    ...(operator ? [account] : []),
    {
      label: 'Key',
      cell: (r) => (r.key_id === null ? '(no key)' : <Named name={keyName(r)} id={r.key_id} />),
      csv: { key_id: (r) => r.key_id ?? '', key: (r) => (r.key_id === null ? '(no key)' : (keyName(r) ?? r.key_id)) },
    },
    {
      label: 'Model',
      cell: (r) => (
        <code class="model" title={r.model}>
          {r.model}
        </code>
      ),
      csv: { model: (r) => r.model },
    },
    // The CSV keeps its columns' places: the endpoint goes in after the status (before the account's email).
    { label: 'Endpoint', minor: true, cell: (r) => r.endpoint },
    {
      label: 'Prompt',
      minor: true,
      cell: (r) => (
        <>
          {tokens(r.prompt_tokens)}
          {r.cached_tokens > 0 && <span class="muted"> ({tokens(r.cached_tokens)} cached)</span>}
        </>
      ),
      csv: { prompt_tokens: (r) => r.prompt_tokens },
      total: (rows) => tokens(sum(rows, (r) => r.prompt_tokens)),
    },
    {
      label: 'Completion',
      minor: true,
      cell: (r) => (
        <>
          {tokens(r.completion_tokens)}
          {r.reasoning_tokens > 0 && <span class="muted"> ({tokens(r.reasoning_tokens)} reasoning)</span>}
        </>
      ),
      csv: { completion_tokens: (r) => r.completion_tokens },
      total: (rows) => tokens(sum(rows, (r) => r.completion_tokens)),
    },
    {
      label: 'Charged',
      cell: (r) => (
        <>
          {tokens(r.charged_tokens)}
          {r.estimated && <span class="muted"> (estimated)</span>}
        </>
      ),
      total: (rows) => tokens(sum(rows, (r) => r.charged_tokens)),
      // Cached and reasoning tokens after these two: the status and what follows it stay the CSV's last columns.
      csv: {
        charged_tokens: (r) => r.charged_tokens,
        estimated: (r) => r.estimated,
        cached_tokens: (r) => r.cached_tokens,
        reasoning_tokens: (r) => r.reasoning_tokens,
      },
    },
    {
      label: 'Status',
      minor: true,
      cell: (r) => (
        <>
          {r.status}
          {r.stream && <span class="muted"> stream</span>}
        </>
      ),
      csv: { stream: (r) => r.stream, status: (r) => r.status },
    },
    { csv: { endpoint: (r) => r.endpoint } },
    ...(operator ? [accountEmail] : []),
    { csv: { request_id: (r) => r.request_id } },
  ];
}

/** The totals row's words: the totals are of the rows on screen, and say so when older ones are not loaded. */
function totalLabel(shown: number, more: boolean): string {
  const requests = counted(shown, 'request');
  return more ? `Total of the ${requests} shown (older ones not loaded)` : `Total of ${requests}`;
}

export function Ledger(props: LedgerProps) {
  const [filter, setFilter] = useState<UsageFilter>({});
  const [rows, setRows] = useState<LedgerRecord[]>();
  const [more, setMore] = useState(false);
  const load = useAction();
  const csv = useAction();
  /** Why the last Apply filtered nothing new: a search that names no account or key, or several. */
  const [problem, setProblem] = useState<string>();
  const columns = ledgerColumns(props);

  const acrossAccounts = props.accounts === true && filter.account_id === undefined && filter.key_id === undefined;
  const fetchOlder = async (shown: LedgerRecord[]) => {
    const page = await olderRecords(props.fetchPage, filter, shown, PAGE, acrossAccounts);
    setRows([...shown, ...page.records]);
    setMore(page.more);
  };
  useEffect(() => {
    setRows(undefined);
    void load.run(() => fetchOlder([]));
  }, [JSON.stringify(filter)]);

  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const value = (name: string) => formValue(form, name) || undefined;
    const base: UsageFilter = {
      model: value('model'),
      since: startOfDay(formValue(form, 'since')),
      until: endOfDay(formValue(form, 'until')),
    };
    // The member's key is a dropdown of ids; the operator's account and key are searches, resolved to ids here.
    if (!props.accounts) {
      setProblem(undefined);
      setFilter({ ...base, key_id: value('key_id') });
      return;
    }
    void load.run(async () => {
      const account = await accountLookup.resolve(formValue(form, 'account_id'));
      if ('problem' in account) return setProblem(account.problem);
      const key = await keyLookup.resolve(formValue(form, 'key_id'), account.id);
      if ('problem' in key) return setProblem(key.problem);
      setProblem(undefined);
      setFilter({ ...base, account_id: account.id, key_id: key.id });
    });
  };

  const download = () =>
    csv.run(async () => {
      const all: LedgerRecord[] = [];
      for (let more = true; more && all.length < CSV_MAX_ROWS;) {
        const page = await olderRecords(props.fetchPage, filter, all, 1000, acrossAccounts);
        all.push(...page.records);
        more = page.more;
      }
      downloadText(props.filename, tableCsv(columns, all), 'text/csv');
    });

  return (
    <>
      <FilterForm
        accounts={props.accounts === true}
        keys={props.keys}
        models={props.models}
        onSubmit={apply}
        download={download}
        preparing={csv.busy}
        problem={problem}
      />
      {csv.error && <ErrorNote message={`The CSV could not be made: ${csv.error}`} />}
      {load.error && <ErrorNote message={`Could not load the usage: ${load.error}`} />}
      {rows === undefined ? (
        !load.error && <p class="loading">Loading the usage…</p>
      ) : rows.length === 0 ? (
        <Empty>No requests match. Requests made with your keys show here, newest first.</Empty>
      ) : (
        <>
          <ListTable columns={columns} rows={rows} rowKey={(r) => r.request_id} totalLabel={totalLabel(rows.length, more)} />
          {more && (
            <button type="button" class="secondary" disabled={load.busy} onClick={() => void load.run(() => fetchOlder(rows))}>
              {load.busy ? 'Loading…' : 'Show older requests'}
            </button>
          )}
        </>
      )}
    </>
  );
}
