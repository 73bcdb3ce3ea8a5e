/** The one results table: every figure also as a ratio to the bare passthrough, and PASS/MISS against the project's targets. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Machine } from './machine';
import type { Figures } from './measure';
import { settings } from './workload';

/** Ratios are against this target, measured in the same run. */
export const BASELINE = 'passthrough';
/** The targets are judged on tokenmeter with the Redis store, all metering on. */
export const JUDGED = 'tokenmeter-redis';

/** A figure over the rounds: their median, least and most. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface TargetResult {
  name: string;
  label: string;
  /** Each figure's median over the rounds the target ran in. */
  figures?: Figures;
  /** The figures of each round. */
  rounds?: Figures[];
  /** Each figure's ratio to the passthrough of the same round, over the rounds. */
  ratios?: Partial<Record<keyof Figures, Spread>>;
  /** The latencies' difference from the passthrough of the same round (ms), over the rounds: what the target adds. */
  added?: Partial<Record<keyof Figures, Spread>>;
  /** Why the target was not measured. */
  skipped?: string;
}

/** One worker-group configuration: JSON max req/s and CPU per request, over the rounds. */
export interface GroupResult {
  label: string;
  rps: Spread;
  cpuUs: Spread;
  busyPct: Spread;
  /** req/s as a ratio to one worker on one core in the same round. */
  ratio: Spread;
}

export function spread(values: number[]): Spread {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: NaN, min: NaN, max: NaN };
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1] };
}

/**
 * A target's rounds summed up: each figure's median, and its ratio to the passthrough of the same round (a target
 * measured in fewer rounds than the passthrough is compared with the passthrough's rounds it ran beside).
 */
export function summarize(target: TargetResult, rounds: Figures[], baseRounds: (Figures | undefined)[]): TargetResult {
  const keys = Object.keys(rounds[0]) as (keyof Figures)[];
  const figures = Object.fromEntries(keys.map((k) => [k, spread(rounds.map((r) => r[k])).median])) as unknown as Figures;
  const ratios: Partial<Record<keyof Figures, Spread>> = {};
  const added: Partial<Record<keyof Figures, Spread>> = {};
  for (const k of keys) {
    const each = rounds.flatMap((r, i) => (baseRounds[i] ? [r[k] / (baseRounds[i] as Figures)[k]] : []));
    if (each.length > 0) ratios[k] = spread(each);
  }
  for (const k of ADDED) {
    const each = rounds.flatMap((r, i) => (baseRounds[i] ? [r[k] - (baseRounds[i] as Figures)[k]] : []));
    if (each.length > 0) added[k] = spread(each);
  }
  return { ...target, figures, rounds, ratios, added };
}

type Goal =
  | { kind: 'min-ratio' | 'max-ratio'; value: number }
  /** At most this much above the baseline, in the metric's unit. */
  | { kind: 'max-added'; value: number }
  | { kind: 'max-value'; value: number };

interface Metric {
  key: keyof Figures;
  label: string;
  unit: string;
  digits: number;
  goal?: Goal;
  /** Shown in the table of ratios over the rounds though it has no goal. */
  spread?: boolean;
}

const METRICS: Metric[] = [
  { key: 'jsonRps', label: 'JSON max req/s', unit: 'req/s', digits: 0, goal: { kind: 'min-ratio', value: 0.9 } },
  { key: 'jsonCpuUs', label: 'JSON CPU per request', unit: 'µs', digits: 0, goal: { kind: 'max-ratio', value: 1.15 } },
  { key: 'streamRps', label: 'stream max streams/s', unit: '/s', digits: 0, goal: { kind: 'min-ratio', value: 0.85 } },
  { key: 'streamCpuUs', label: 'stream CPU per stream', unit: 'µs', digits: 0, goal: { kind: 'max-ratio', value: 1.25 } },
  { key: 'jsonRateCpuUs', label: `JSON CPU per request at ${settings.jsonRate}/s`, unit: 'µs', digits: 0, spread: true },
  { key: 'streamRateCpuUs', label: `stream CPU per stream at ${settings.streamRate}/s`, unit: 'µs', digits: 0, spread: true },
  { key: 'embeddingsRps', label: 'embeddings (64 inputs) max req/s', unit: 'req/s', digits: 0, spread: true },
  { key: 'embeddingsCpuUs', label: 'embeddings CPU per request', unit: 'µs', digits: 0, spread: true },
  { key: 'responsesStreamRps', label: 'Responses stream max streams/s', unit: '/s', digits: 0, spread: true },
  { key: 'responsesStreamCpuUs', label: 'Responses stream CPU per stream', unit: 'µs', digits: 0, spread: true },
  { key: 'messagesStreamRps', label: 'Messages stream max streams/s', unit: '/s', digits: 0, spread: true },
  { key: 'messagesStreamCpuUs', label: 'Messages stream CPU per stream', unit: 'µs', digits: 0, spread: true },
  { key: 'jsonSyscalls', label: 'JSON syscalls per request', unit: '', digits: 1 },
  { key: 'streamSyscalls', label: 'stream syscalls per stream', unit: '', digits: 1 },
  { key: 'jsonP50Ms', label: 'JSON latency p50', unit: 'ms', digits: 2 },
  { key: 'jsonP99Ms', label: 'JSON latency p99', unit: 'ms', digits: 2 },
  { key: 'jsonTtfbP50Ms', label: 'JSON TTFB p50', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 1 } },
  { key: 'jsonTtfbP99Ms', label: 'JSON TTFB p99', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 3 } },
  { key: 'jsonTtfbP999Ms', label: 'JSON TTFB p99.9', unit: 'ms', digits: 2 },
  { key: 'streamP50Ms', label: 'stream duration p50', unit: 'ms', digits: 2 },
  { key: 'streamP99Ms', label: 'stream duration p99', unit: 'ms', digits: 2 },
  { key: 'streamTtfbP50Ms', label: 'stream TTFB p50', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 1 } },
  { key: 'streamTtfbP99Ms', label: 'stream TTFB p99', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 3 } },
  { key: 'streamTtfbP999Ms', label: 'stream TTFB p99.9', unit: 'ms', digits: 2 },
  { key: 'rssPerStreamKiB', label: 'RSS per open stream', unit: 'KiB', digits: 1, goal: { kind: 'max-value', value: 64 } },
  { key: 'pacedCpuUs', label: 'CPU per paced stream', unit: 'µs', digits: 0, goal: { kind: 'max-ratio', value: 1.1 } },
  { key: 'jsonBusyPct', label: 'target busy, JSON max', unit: '%', digits: 0 },
  { key: 'streamBusyPct', label: 'target busy, stream max', unit: '%', digits: 0 },
  { key: 'othersPct', label: 'other processes, % of a core', unit: '%', digits: 0 },
  { key: 'failed', label: 'failed requests', unit: '', digits: 0 },
];

export interface Verdict {
  metric: string;
  goal: string;
  value: string;
  pass: boolean;
}

export interface Report {
  generatedAt: string;
  durationSeconds: number;
  machine: Machine;
  versions: Record<string, string>;
  settings: typeof settings;
  notes: string[];
  targets: TargetResult[];
  groups: GroupResult[];
  verdicts: Verdict[];
}

/** The fixed-rate latencies whose difference from the passthrough's, round by round, is reported (tail-report.ts). */
export const ADDED: (keyof Figures)[] = [
  'jsonTtfbP50Ms',
  'jsonTtfbP99Ms',
  'jsonTtfbP999Ms',
  'streamTtfbP50Ms',
  'streamTtfbP99Ms',
  'streamTtfbP999Ms',
];

export const num = (v: number, digits: number) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

/** A target's ratio to the passthrough: the median of its per-round ratios, or of its medians when it has none. */
function ratioOf(m: Metric, base: Figures, judged: TargetResult): number {
  return judged.ratios?.[m.key]?.median ?? (judged.figures as Figures)[m.key] / base[m.key];
}

function judge(m: Metric & { goal: Goal }, base: Figures, target: TargetResult): Verdict {
  const b = base[m.key];
  const judged = target.figures as Figures;
  const v = judged[m.key];
  const g = m.goal;
  const metric = `${m.label} (${m.unit})`;
  const r = ratioOf(m, base, target);
  switch (g.kind) {
    case 'min-ratio':
      return { metric, goal: `≥ ${g.value.toFixed(2)}×`, value: `${num(r, 2)}×`, pass: r >= g.value };
    case 'max-ratio':
      return { metric, goal: `≤ ${g.value.toFixed(2)}×`, value: `${num(r, 2)}×`, pass: r <= g.value };
    case 'max-added':
      return { metric, goal: `≤ +${g.value} ${m.unit}`, value: `+${num(v - b, 2)} ${m.unit}`, pass: v - b <= g.value };
    case 'max-value':
      return { metric, goal: `≤ ${g.value} ${m.unit}`, value: `${num(v, m.digits)} ${m.unit}`, pass: v <= g.value };
  }
}

/** Verdicts for every metric with a goal; empty when the baseline or the judged target is missing. */
export function verdicts(targets: TargetResult[]): Verdict[] {
  const base = targets.find((t) => t.name === BASELINE)?.figures;
  const judged = targets.find((t) => t.name === JUDGED);
  if (!base || !judged?.figures) return [];
  return METRICS.filter((m): m is Metric & { goal: Goal } => m.goal !== undefined).map((m) => judge(m, base, judged));
}

function cell(m: Metric, t: TargetResult, base: Figures | undefined): string {
  if (!t.figures) return 'skipped';
  const v = t.figures[m.key];
  if (!base || t.name === BASELINE || m.key === 'failed' || m.unit === '%') return num(v, m.digits);
  return `${num(v, m.digits)} (${num(ratioOf(m, base, t), 2)}×)`;
}

/** The ratios of every goal metric over the rounds, for each target measured in more than one. */
export function spreadTable(targets: TargetResult[]): string {
  const repeated = targets.filter((t) => t.name !== BASELINE && (t.rounds?.length ?? 0) > 1 && t.ratios);
  if (repeated.length === 0) return '';
  const header = ['ratio to the passthrough, median [least–most]', ...repeated.map((t) => `${t.label} (${t.rounds?.length} rounds)`)];
  const rows = METRICS.filter((m) => m.spread || (m.goal && m.goal.kind !== 'max-value' && m.goal.kind !== 'max-added')).map((m) => [
    m.label,
    ...repeated.map((t) => {
      const r = t.ratios?.[m.key];
      return r ? `${num(r.median, 2)}× [${num(r.min, 2)}–${num(r.max, 2)}]` : 'n/a';
    }),
  ]);
  return aligned(header, rows);
}

/** The worker groups: JSON max req/s, CPU per request, and req/s against one worker on one core. */
export function groupTable(groups: GroupResult[]): string {
  if (groups.length === 0) return '';
  const header = [
    'worker group (JSON, median [least–most])',
    'req/s',
    'CPU per request (µs)',
    'busy (% of a core)',
    'req/s vs 1 worker, 1 core',
  ];
  const f = (s: Spread, digits: number) => `${num(s.median, digits)} [${num(s.min, digits)}–${num(s.max, digits)}]`;
  const rows = groups.map((g) => [g.label, f(g.rps, 0), f(g.cpuUs, 0), f(g.busyPct, 0), `${f(g.ratio, 2)}×`]);
  return aligned(header, rows);
}

export function aligned(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** The results as a Markdown table (aligned, so it also reads well in a terminal). */
export function table(targets: TargetResult[], judgedVerdicts: Verdict[]): string {
  const base = targets.find((t) => t.name === BASELINE)?.figures;
  const judgedLabel = targets.find((t) => t.name === JUDGED)?.label ?? JUDGED;
  const header = ['metric', ...targets.map((t) => t.label), `target (${judgedLabel})`];
  const rows = METRICS.map((m) => {
    const v = judgedVerdicts.find((x) => x.metric === `${m.label} (${m.unit})`);
    const verdict = v ? `${v.pass ? 'PASS' : 'MISS'} ${v.value} (${v.goal})` : '';
    return [m.unit ? `${m.label} (${m.unit})` : m.label, ...targets.map((t) => cell(m, t, base)), verdict];
  });
  return aligned(header, rows);
}

/** The report as Markdown; `sections` (more tables, tail-report.ts's) go after the ratios over the rounds. */
export function markdown(r: Report, sections: string[] = []): string {
  const s = r.settings;
  const versions = Object.entries(r.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `# tokenmeter benchmark

${r.generatedAt}, ${r.durationSeconds} s. Ratios are to the bare passthrough (Express 5 + http-proxy-middleware 3) measured in the
same round; every figure is the median over the rounds a target ran in (${s.rounds} interleaved rounds for the compared
targets, one for the others); PASS/MISS judges tokenmeter on Redis, all metering on. See bench/README.md for what each
figure means.

- machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, ${r.machine.os}, kernel ${r.machine.kernel}
- versions: ${versions}
- load: max req/s with ${s.connections} connections, one window of ${s.maxWindowMs / 1000} s per round after ${s.warmupMs / 1000} s of warm-up; latency and TTFB at ${s.jsonRate} JSON req/s and ${s.streamRate} streams/s, ${s.rateWindowMs / 1000} s each; RSS per stream with ${s.openStreams} streams open at once, the upstream sending an event every ${s.pacedChunkDelayMs} ms

${table(r.targets, r.verdicts)}

${spreadTable(r.targets)}

${sections.filter((t) => t !== '').join('\n\n')}

${groupTable(r.groups)}

${r.notes.map((n) => `- ${n}`).join('\n')}
`;
}

/** Writes `<name>.json` and `<name>.md` (`latest`, or `smoke` for a BENCH_SMOKE run, which is not committed). */
export function writeReport(dir: string, r: Report, name = 'latest', sections: string[] = []): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(dir, `${name}.md`), markdown(r, sections));
}
