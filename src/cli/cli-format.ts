/** Plain-text tables and values for the CLI's human-readable output. */

export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map(String));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

export function time(unixSeconds: number | null): string {
  if (unixSeconds === null) return '-';
  return new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** `30d`, `12h`, `90m`, `3600s` or plain seconds. */
export function durationSeconds(text: string): number | undefined {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}
