/**
 * The console's one table of records: a header row, a row per record, the row's actions under a visually hidden
 * "Actions" header; on a narrow screen each row becomes a card whose cells carry their column's label. Minor columns
 * show as columns only on a wide screen; elsewhere they sit behind each row's Details toggle, so the table fits its
 * column. The same columns make the CSV export, so a table and its download cannot drift apart.
 */
import type { ComponentChildren } from 'preact';
import { toCsv, type CsvValue } from './download';

export interface Column<T> {
  /** The header, and each cell's label on a narrow screen. A column without a label and cell is in the CSV only. */
  label?: string;
  cell?: (row: T) => ComponentChildren;
  /** Classes of the column's cells (`nowrap`, `num`). */
  class?: string;
  /** A column a reader can do without at a glance: its own column on a wide screen, else behind the row's Details. */
  minor?: boolean;
  /** The column's cell in the totals row, from every row shown; unset: empty there. */
  total?: (rows: readonly T[]) => ComponentChildren;
  /** The column's fields in the CSV, by header, in order (one cell may show several); unset: not exported. */
  csv?: Record<string, (row: T) => CsvValue>;
}

export interface ListTableProps<T> {
  columns: Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  rowClass?: (row: T) => string | undefined;
  /** The last cell of each row: its buttons and forms. */
  actions?: (row: T) => ComponentChildren;
  /** Set: a totals row under the rows, headed by this, with each column's `total`. */
  totalLabel?: string;
}

export function ListTable<T>({ columns, rows, rowKey, rowClass, actions, totalLabel }: ListTableProps<T>) {
  const shown = columns.filter((c) => c.cell !== undefined);
  const minor = shown.filter((c) => c.minor);
  const cellClass = (c: Column<T>) => [c.class, c.minor && 'minor'].filter(Boolean).join(' ') || undefined;
  return (
    <table class="list">
      <thead>
        <tr>
          {shown.map((c) => (
            <th key={c.label} scope="col" class={c.minor ? 'minor' : undefined}>
              {c.label}
            </th>
          ))}
          {minor.length > 0 && (
            <th scope="col" class="row-more">
              Details
            </th>
          )}
          {actions && (
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)} class={rowClass?.(row)}>
            {shown.map((c) => (
              <td key={c.label} data-label={c.label} class={cellClass(c)}>
                {c.cell!(row)}
              </td>
            ))}
            {minor.length > 0 && (
              <td class="row-more">
                <details>
                  <summary>Details</summary>
                  <dl class="pairs">
                    {minor.map((c) => (
                      <div key={c.label}>
                        <dt>{c.label}</dt>
                        <dd>{c.cell!(row)}</dd>
                      </div>
                    ))}
                  </dl>
                </details>
              </td>
            )}
            {actions && <td class="actions">{actions(row)}</td>}
          </tr>
        ))}
      </tbody>
      {totalLabel !== undefined && (
        <tfoot>
          <tr>
            {shown.map((c, i) =>
              i === 0 ? (
                <th key={c.label} scope="row">
                  {totalLabel}
                </th>
              ) : (
                <td key={c.label} data-label={c.label} class={cellClass(c)}>
                  {c.total?.(rows)}
                </td>
              ),
            )}
            {minor.length > 0 && <td class="row-more" />}
            {actions && <td />}
          </tr>
        </tfoot>
      )}
    </table>
  );
}

/** The rows as CSV: the columns' fields, in column order. */
export function tableCsv<T>(columns: Column<T>[], rows: readonly T[]): string {
  const fields = columns.flatMap((c) => Object.entries(c.csv ?? {}));
  return toCsv(
    fields.map(([header]) => header),
    rows.map((row) => fields.map(([, value]) => value(row))),
  );
}
