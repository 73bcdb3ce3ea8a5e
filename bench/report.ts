/** The one results table: every figure also as a ratio to the bare passthrough, and PASS/MISS against the project's targets. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Machine } from './machine';
import type { Figures } from './measure';
import type { settings } from './workload';

/** Ratios are against this target, measured in the same run. */
export const BASELINE = 'passthrough';
/** The targets are judged on tokenmeter with the Redis store, all metering on. */
export const JUDGED = 'tokenmeter-redis';

export interface TargetResult {
  name: string;
  label: string;
  figures?: Figures;
  /** Why the target was not measured. */
  skipped?: string;
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
}

const METRICS: Metric[] = [
  { key: 'jsonRps', label: 'JSON max req/s', unit: 'req/s', digits: 0, goal: { kind: 'min-ratio', value: 0.9 } },
  { key: 'jsonCpuUs', label: 'JSON CPU per request', unit: 'µs', digits: 0, goal: { kind: 'max-ratio', value: 1.15 } },
  { key: 'streamRps', label: 'stream max streams/s', unit: '/s', digits: 0, goal: { kind: 'min-ratio', value: 0.85 } },
  { key: 'streamCpuUs', label: 'stream CPU per stream', unit: 'µs', digits: 0, goal: { kind: 'max-ratio', value: 1.25 } },
  { key: 'jsonSyscalls', label: 'JSON syscalls per request', unit: '', digits: 1 },
  { key: 'streamSyscalls', label: 'stream syscalls per stream', unit: '', digits: 1 },
  { key: 'jsonP50Ms', label: 'JSON latency p50', unit: 'ms', digits: 2 },
  { key: 'jsonP99Ms', label: 'JSON latency p99', unit: 'ms', digits: 2 },
  { key: 'jsonTtfbP50Ms', label: 'JSON TTFB p50', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 1 } },
  { key: 'jsonTtfbP99Ms', label: 'JSON TTFB p99', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 3 } },
  { key: 'streamP50Ms', label: 'stream duration p50', unit: 'ms', digits: 2 },
  { key: 'streamP99Ms', label: 'stream duration p99', unit: 'ms', digits: 2 },
  { key: 'streamTtfbP50Ms', label: 'stream TTFB p50', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 1 } },
  { key: 'streamTtfbP99Ms', label: 'stream TTFB p99', unit: 'ms', digits: 2, goal: { kind: 'max-added', value: 3 } },
  { key: 'rssPerStreamKiB', label: 'RSS per open stream', unit: 'KiB', digits: 1, goal: { kind: 'max-value', value: 64 } },
  { key: 'pacedCpuUs', label: 'CPU per paced stream', unit: 'µs', digits: 0 },
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
  verdicts: Verdict[];
}

const num = (v: number, digits: number) => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');

function judge(m: Metric & { goal: Goal }, base: Figures, judged: Figures): Verdict {
  const b = base[m.key];
  const v = judged[m.key];
  const g = m.goal;
  const metric = `${m.label} (${m.unit})`;
  switch (g.kind) {
    case 'min-ratio':
      return { metric, goal: `≥ ${g.value.toFixed(2)}×`, value: `${num(v / b, 2)}×`, pass: v / b >= g.value };
    case 'max-ratio':
      return { metric, goal: `≤ ${g.value.toFixed(2)}×`, value: `${num(v / b, 2)}×`, pass: v / b <= g.value };
    case 'max-added':
      return { metric, goal: `≤ +${g.value} ${m.unit}`, value: `+${num(v - b, 2)} ${m.unit}`, pass: v - b <= g.value };
    case 'max-value':
      return { metric, goal: `≤ ${g.value} ${m.unit}`, value: `${num(v, m.digits)} ${m.unit}`, pass: v <= g.value };
  }
}

/** Verdicts for every metric with a goal; empty when the baseline or the judged target is missing. */
export function verdicts(targets: TargetResult[]): Verdict[] {
  const base = targets.find((t) => t.name === BASELINE)?.figures;
  const judged = targets.find((t) => t.name === JUDGED)?.figures;
  if (!base || !judged) return [];
  return METRICS.filter((m): m is Metric & { goal: Goal } => m.goal !== undefined).map((m) => judge(m, base, judged));
}

function cell(m: Metric, t: TargetResult, base: Figures | undefined): string {
  if (!t.figures) return 'skipped';
  const v = t.figures[m.key];
  if (!base || t.name === BASELINE || m.key === 'failed' || m.unit === '%') return num(v, m.digits);
  return `${num(v, m.digits)} (${num(v / base[m.key], 2)}×)`;
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
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function markdown(r: Report): string {
  const s = r.settings;
  const versions = Object.entries(r.versions)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `# tokenmeter benchmark

${r.generatedAt}, ${r.durationSeconds} s. Ratios are to the bare passthrough (Express 5 + http-proxy-middleware 3) measured in the
same run; PASS/MISS judges tokenmeter on Redis, all metering on. See bench/README.md for what each figure means.

- machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, ${r.machine.os}, kernel ${r.machine.kernel}
- versions: ${versions}
- load: max req/s with ${s.connections} connections, best of ${s.repeats} windows of ${s.maxWindowMs / 1000} s after ${s.warmupMs / 1000} s of warm-up; latency and TTFB at ${s.jsonRate} JSON req/s and ${s.streamRate} streams/s, ${s.rateWindowMs / 1000} s each; RSS per stream with ${s.openStreams} streams open at once, the upstream sending an event every ${s.pacedChunkDelayMs} ms

${table(r.targets, r.verdicts)}

${r.notes.map((n) => `- ${n}`).join('\n')}
`;
}

export function writeReport(dir: string, r: Report): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(dir, 'latest.md'), markdown(r));
}
