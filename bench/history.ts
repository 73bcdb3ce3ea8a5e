/**
 * bench/results/history.csv: one row per `npm run bench`, the judged target's median ratios to the passthrough beside
 * the commit, date and machine, so that a regression shows as a step down the file rather than in one run's noise.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
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

/**
 * Appends the run's row to `file`, writing the header first when the file is new; a file whose header differs
 * (columns added since) gets the new header on a line of its own before the row, so every row reads by the header
 * above it. Returns whether a row was written.
 */
export function appendHistory(file: string, run: HistoryRun): boolean {
  const row = historyRow(run);
  if (row === undefined) return false;
  const lines = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
  const lastHeader = [...lines].reverse().find((l) => l.startsWith('commit,'));
  const head = lastHeader === HISTORY_HEADER ? '' : `${HISTORY_HEADER}\n`;
  appendFileSync(file, `${head}${row}\n`);
  return true;
}
