/**
 * bench/results/history.csv: one row per `npm run bench`, the judged target's median ratios to the passthrough beside
 * the commit, date and machine, so that a regression shows as a step down the file rather than in one run's noise.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Machine } from './machine';
import type { Figures } from './measure';
import { JUDGED, type TargetResult } from './report';

/** The ratios kept, in the file's column order; a new one is added at the end so older rows stay readable. */
export const HISTORY_RATIOS: (keyof Figures)[] = [
  'jsonCpuUs',
  'streamCpuUs',
  'jsonRateCpuUs',
  'streamRateCpuUs',
  'pacedCpuUs',
  'responsesStreamCpuUs',
  'embeddingsCpuUs',
  'jsonRps',
  'streamRps',
  'messagesStreamCpuUs',
];

/** The latencies kept as what the judged target adds to the passthrough's (ms). */
export const HISTORY_ADDED: (keyof Figures)[] = ['jsonTtfbP50Ms', 'jsonTtfbP99Ms', 'streamTtfbP50Ms', 'streamTtfbP99Ms'];

export const HISTORY_HEADER = [
  'commit',
  'date',
  'machine',
  'rounds',
  ...HISTORY_RATIOS.map((k) => `${k}_ratio`),
  ...HISTORY_ADDED.map((k) => `${k}_added`),
].join(',');

export interface HistoryRun {
  commit: string;
  generatedAt: string;
  machine: Machine;
  targets: TargetResult[];
}

/** A field as CSV writes it: quoted when it holds a comma, quote or line break. */
function field(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

const figure = (v: number | undefined, digits: number) => (v !== undefined && Number.isFinite(v) ? v.toFixed(digits) : '');

/** The row for a run, or undefined when the judged target was not measured (nothing to compare across commits). */
export function historyRow(run: HistoryRun): string | undefined {
  const judged = run.targets.find((t) => t.name === JUDGED);
  if (!judged?.ratios) return undefined;
  const m = run.machine;
  return [
    field(run.commit),
    run.generatedAt,
    field(`${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}`),
    String(judged.rounds?.length ?? 0),
    ...HISTORY_RATIOS.map((k) => figure(judged.ratios?.[k]?.median, 3)),
    ...HISTORY_ADDED.map((k) => figure(judged.added?.[k]?.median, 2)),
  ].join(',');
}

/** A CSV line's fields as written (a quoted field keeps its quotes, so it is written back as it was). */
function fields(line: string): string[] {
  const out: string[] = [];
  for (let at = 0; at <= line.length;) {
    const value = /^("(?:[^"]|"")*"|[^,]*)/.exec(line.slice(at))?.[1] ?? '';
    out.push(value);
    at += value.length + 1;
  }
  return out;
}

/**
 * The file's rows under one header, HISTORY_HEADER: each row's fields moved to the columns of the same name (those
 * its header did not have are empty), so the whole file reads with one header, as a CSV reader expects.
 */
function underOneHeader(lines: string[]): string[] {
  const columns = HISTORY_HEADER.split(',');
  let header: string[] = columns;
  const out = [HISTORY_HEADER];
  for (const line of lines) {
    if (line.startsWith('commit,')) {
      header = line.split(',');
      continue;
    }
    const values = fields(line);
    out.push(columns.map((name) => values[header.indexOf(name)] ?? '').join(','));
  }
  return out;
}

/**
 * Appends the run's row to `file`, writing the header first when the file is new; a file written under another
 * header (columns added since, or a second header line of an earlier version) is rewritten under this one first.
 * Returns whether a row was written.
 */
export function appendHistory(file: string, run: HistoryRun): boolean {
  const row = historyRow(run);
  if (row === undefined) return false;
  const lines = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
  const headers = lines.filter((l) => l.startsWith('commit,'));
  if (headers.length === 1 && headers[0] === HISTORY_HEADER && lines[0] === HISTORY_HEADER) appendFileSync(file, `${row}\n`);
  else writeFileSync(file, `${[...underOneHeader(lines), row].join('\n')}\n`);
  return true;
}
