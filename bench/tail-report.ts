/**
 * The fixed-rate phases' tail in the report: the time to first byte each target adds to the passthrough's at p50, p99
 * and p99.9 (round by round), and what each target's event loop waited on meanwhile (tail.ts).
 */
import type { Figures } from './measure';
import { aligned, num, type Spread, type TargetResult } from './report';
import { settings } from './workload';

const range = (s: Spread | undefined) => (s ? `${num(s.median, 2)} [${num(s.min, 2)}–${num(s.max, 2)}]` : 'n/a');

/** Added TTFB, median [least–most] over the rounds, for every tokenmeter target (the others have nothing to add). */
export function addedTable(targets: TargetResult[]): string {
  const compared = targets.filter((t) => t.name.startsWith('tokenmeter') && t.added && Object.keys(t.added).length > 0);
  if (compared.length === 0) return '';
  const header = [
    `added TTFB, ms (target − passthrough, same round), median [least–most]`,
    `JSON p50`,
    'JSON p99',
    'JSON p99.9',
    'stream p50',
    'stream p99',
    'stream p99.9',
  ];
  const keys: (keyof Figures)[] = [
    'jsonTtfbP50Ms',
    'jsonTtfbP99Ms',
    'jsonTtfbP999Ms',
    'streamTtfbP50Ms',
    'streamTtfbP99Ms',
    'streamTtfbP999Ms',
  ];
  const rounds = (n: number) => `${n} round${n === 1 ? '' : 's'}`;
  const rows = compared.map((t) => [`${t.label} (${rounds(t.rounds?.length ?? 0)})`, ...keys.map((k) => range(t.added?.[k]))]);
  return aligned(header, rows);
}

/** What each target's event loop waited on at the fixed rates: medians over its rounds, one row per phase. */
export function waitsTable(targets: TargetResult[]): string {
  const measured = targets.filter((t) => t.figures && Number.isFinite(t.figures.jsonGcPct));
  if (measured.length === 0) return '';
  const header = [
    'waits at the fixed rates (median over rounds)',
    'event-loop delay p99 (ms)',
    'event-loop delay max (ms)',
    'GC (% of the window)',
    'longest GC pause (ms)',
    'slowest 1 % with a GC pause inside (%)',
  ];
  const rows = measured.flatMap((t) => {
    const f = t.figures as Figures;
    return [
      [
        `${t.label}, JSON at ${settings.jsonRate}/s`,
        f.jsonLoopDelayP99Ms,
        f.jsonLoopDelayMaxMs,
        f.jsonGcPct,
        f.jsonGcMaxMs,
        f.jsonSlowWithGcPct,
      ],
      [
        `${t.label}, stream at ${settings.streamRate}/s`,
        f.streamLoopDelayP99Ms,
        f.streamLoopDelayMaxMs,
        f.streamGcPct,
        f.streamGcMaxMs,
        f.streamSlowWithGcPct,
      ],
    ].map(([label, ...v]) => [label as string, ...(v as number[]).map((x, i) => num(x, i === 4 ? 0 : 1))]);
  });
  return aligned(header, rows);
}
