/** The usage ledger as a filterable, paged table with a CSV download; shared by the account's and the operator's pages. */
import { useEffect, useState } from 'preact/hooks';
import type { UsageFilter } from './api';
import type { UsageObject } from './api-types';
import { downloadText, toCsv } from './download';
import { dateTime, endOfDay, startOfDay, tokens } from './format';
import { Empty, ErrorNote, Field, formValue, useAction } from './ui';

const PAGE = 50;
/** The most rows one CSV download fetches (page by page). */
const CSV_MAX_ROWS = 20_000;

export interface LedgerProps {
  fetchPage: (filter: UsageFilter) => Promise<UsageObject[]>;
  /** Options for the key filter: id and label. */
  keys?: { id: string; label: string }[];
  /** Show an account filter and column (operators). */
  accounts?: boolean;
  /** How a key id reads in the table (its name). */
  keyLabel?: (id: string) => string;
  filename: string;
}

type FetchPage = LedgerProps['fetchPage'];

/**
 * The `size` records just older than those shown (all of `shown` is newest first). The API answers the newest records
 * oldest first and pages only forward, so this asks for records up to the oldest shown second, with room for the ones
 * of that second already shown, and drops those. `more` is false once the API had no more to give.
 */
export async function olderRecords(
  fetchPage: FetchPage,
  filter: UsageFilter,
  shown: UsageObject[],
  size: number,
): Promise<{ records: UsageObject[]; more: boolean }> {
  const oldest = shown.length > 0 ? shown[shown.length - 1].created : undefined;
  const sameSecond = oldest === undefined ? [] : shown.filter((r) => r.created === oldest);
  const limit = Math.min(1000, size + sameSecond.length);
  const page = await fetchPage({ ...filter, ...(oldest !== undefined ? { until: oldest } : {}), limit });
  const seen = new Set(sameSecond.map((r) => r.request_id));
  const records = page.reverse().filter((r) => !seen.has(r.request_id));
  // A full page of nothing new would repeat forever: only more than `limit` records in one second can cause it.
  return { records, more: page.length === limit && records.length > 0 };
}

export function Ledger(props: LedgerProps) {
  const [filter, setFilter] = useState<UsageFilter>({});
  const [rows, setRows] = useState<UsageObject[]>();
  const [more, setMore] = useState(false);
  const load = useAction();
  const csv = useAction();
  const label = (id: string | null) => (id === null ? '(no key)' : props.keyLabel ? props.keyLabel(id) : id);

  const fetchOlder = async (shown: UsageObject[]) => {
    const page = await olderRecords(props.fetchPage, filter, shown, PAGE);
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
    setFilter({
      key_id: value('key_id'),
      account_id: value('account_id'),
      model: value('model'),
      since: startOfDay(formValue(form, 'since')),
      until: endOfDay(formValue(form, 'until')),
    });
  };

  const download = () =>
    csv.run(async () => {
      const all: UsageObject[] = [];
      for (let more = true; more && all.length < CSV_MAX_ROWS;) {
        const page = await olderRecords(props.fetchPage, filter, all, 1000);
        all.push(...page.records);
        more = page.more;
      }
      const header = ['time', ...(props.accounts ? ['account_id'] : []), 'key_id', 'key', 'model', 'prompt_tokens', 'completion_tokens'];
      header.push('charged_tokens', 'estimated', 'stream', 'status', 'request_id');
      const body = all.map((r) => [
        new Date(r.created * 1000).toISOString(),
        ...(props.accounts ? [r.account_id ?? ''] : []),
        r.key_id ?? '',
        label(r.key_id),
        r.model,
        r.prompt_tokens,
        r.completion_tokens,
        r.charged_tokens,
        r.estimated,
        r.stream,
        r.status,
        r.request_id,
      ]);
      downloadText(props.filename, toCsv(header, body), 'text/csv');
    });

  return (
    <>
      <form class="panel filters" onSubmit={apply} aria-label="Filter the usage">
        {props.accounts && <Field label="Account id" name="account_id" />}
        {props.keys ? (
          <div class="field">
            <label for="f-key">Key</label>
            <select id="f-key" name="key_id">
              <option value="">All keys</option>
              {props.keys.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.label}
                </option>
              ))}
            </select>
          </div>
        ) : (
          <Field label="Key id" name="key_id" />
        )}
        <Field label="Model" name="model" />
        <Field label="From" name="since" type="date" />
        <Field label="To" name="until" type="date" />
        <div class="buttons">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" onClick={download} disabled={csv.busy}>
            {csv.busy ? 'Preparing CSV…' : 'Download CSV'}
          </button>
        </div>
      </form>
      {csv.error && <ErrorNote message={`The CSV could not be made: ${csv.error}`} />}
      {load.error && <ErrorNote message={`Could not load the usage: ${load.error}`} />}
      {rows === undefined ? (
        !load.error && <p class="loading">Loading the usage…</p>
      ) : rows.length === 0 ? (
        <Empty>No requests match. Requests made with your keys show here, newest first.</Empty>
      ) : (
        <>
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Time</th>
                {props.accounts && <th scope="col">Account</th>}
                <th scope="col">Key</th>
                <th scope="col">Model</th>
                <th scope="col">Prompt</th>
                <th scope="col">Completion</th>
                <th scope="col">Charged</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.request_id}>
                  <td data-label="Time">{dateTime(r.created)}</td>
                  {props.accounts && <td data-label="Account">{r.account_id ?? '—'}</td>}
                  <td data-label="Key">{label(r.key_id)}</td>
                  <td data-label="Model">{r.model}</td>
                  <td data-label="Prompt">{tokens(r.prompt_tokens)}</td>
                  <td data-label="Completion">{tokens(r.completion_tokens)}</td>
                  <td data-label="Charged">
                    {tokens(r.charged_tokens)}
                    {r.estimated && <span class="muted"> (estimated)</span>}
                  </td>
                  <td data-label="Status">
                    {r.status}
                    {r.stream && <span class="muted"> stream</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
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
