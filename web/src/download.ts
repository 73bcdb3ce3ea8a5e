/** Downloads made in the page (CSV, redemption codes): a Blob handed to a temporary link, nothing in a URL or storage. */

export function downloadText(filename: string, text: string, type = 'text/plain'): void {
  const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export type CsvValue = string | number | boolean | null;

/** RFC 4180 CSV; cells that a spreadsheet would read as a formula are prefixed with a quote. */
export function toCsv(header: string[], rows: CsvValue[][]): string {
  const cell = (v: CsvValue) => {
    let s = v === null ? '' : String(v);
    if (/^[=+\-@\t\r]/.test(s) && typeof v === 'string') s = `'${s}`;
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}
