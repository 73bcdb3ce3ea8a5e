/**
 * Tokens charged per day (UTC) for the last N days: a bar per day, stacked by model (uPlot, canvas), its legend
 * naming each model with its colour and total, and the numbers as a table.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { DailyUsageObject } from './api-types';
import { counted, tokens } from './format';
import { ListTable, type Column } from './list-table';
import { Empty } from './ui';

const PALETTE = ['#1f5fbf', '#c2410c', '#15803d', '#7e22ce', '#b91c1c', '#0f766e', '#a16207', '#be185d'];
const DAY_MS = 86_400_000;
const HEIGHT = 260;
const compact = new Intl.NumberFormat('en-US', { notation: 'compact' });
/** The y axis's tick steps: whole tokens only (1, 2, 5, 10, 20, 50, …). */
const WHOLE_STEPS = Array.from({ length: 13 }, (_, k) => [1, 2, 5].map((f) => f * 10 ** k)).flat();

/** The last `days` UTC days, oldest first, as YYYY-MM-DD and as Unix seconds at midnight. */
function lastDays(days: number): { keys: string[]; times: number[] } {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const keys: string[] = [];
  const times: number[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const t = today - i * DAY_MS;
    keys.push(new Date(t).toISOString().slice(0, 10));
    times.push(t / 1000);
  }
  return { keys, times };
}

/**
 * The plot's options and data. A day's use is one total, so each day is a bar, not a point joined to the next (a
 * line would draw one busy day as a month-long ramp). Models stack: each series is the running sum up to its model,
 * drawn tallest first so each shorter bar covers the bottom of the one before; the legend reads the model's own
 * numbers, its 30-day total until a day is hovered.
 */
function plotOf(models: string[], perModel: number[][], times: number[], width: number): { opts: uPlot.Options; data: uPlot.AlignedData } {
  // A day the model did not use draws no bar of its own (zero would still draw a hairline).
  const stacked = perModel.map((own, m) =>
    times.map((_t, d) => (own[d] === 0 ? null : perModel.slice(0, m + 1).reduce((sum, s) => sum + s[d], 0))),
  );
  const bars = uPlot.paths.bars!({ size: [0.7, 48] });
  const order = models.map((_, m) => m).reverse();
  const halfDay = DAY_MS / 2000;
  return {
    opts: {
      width,
      height: HEIGHT,
      scales: {
        x: { time: true, range: (_u, min, max) => [min - halfDay, max + halfDay] },
        y: { range: (_u, _min, max) => uPlot.rangeNum(0, max || 1, 0.1, true) },
      },
      axes: [
        {},
        { label: 'tokens', labelSize: 18, size: 50, incrs: WHOLE_STEPS, values: (_u, ticks) => ticks.map((t) => compact.format(t)) },
      ],
      series: [
        { label: 'Day (UTC)', value: (_u, t) => (t == null ? `last ${times.length} days` : new Date(t * 1000).toISOString().slice(0, 10)) },
        ...order.map((m) => ({
          label: models[m],
          stroke: PALETTE[m % PALETTE.length],
          fill: PALETTE[m % PALETTE.length],
          width: 1,
          paths: bars,
          points: { show: false },
          value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) =>
            idx == null
              ? counted(
                  perModel[m].reduce((a, b) => a + b, 0),
                  'token',
                )
              : tokens(perModel[m][idx]),
        })),
      ],
    },
    data: [times, ...order.map((m) => stacked[m])],
  };
}

const NUMBER_COLUMNS: Column<DailyUsageObject>[] = [
  { label: 'Day (UTC)', class: 'nowrap', cell: (r) => r.date },
  {
    label: 'Model',
    cell: (r) => (
      <code class="model" title={r.model}>
        {r.model}
      </code>
    ),
  },
  { label: 'Requests', cell: (r) => tokens(r.requests) },
  { label: 'Charged tokens', cell: (r) => tokens(r.charged_tokens) },
];

export function DailyChart({ rows, days }: { rows: DailyUsageObject[]; days: number }) {
  const box = useRef<HTMLDivElement>(null);
  const models = [...new Set(rows.map((r) => r.model))].sort();

  useEffect(() => {
    const el = box.current;
    if (!el || models.length === 0) return;
    const { keys, times } = lastDays(days);
    const perModel = models.map((model) => {
      const byDay = new Map(rows.filter((r) => r.model === model).map((r) => [r.date, r.charged_tokens]));
      return keys.map((k) => byDay.get(k) ?? 0);
    });
    const width = () => Math.max(280, el.clientWidth);
    const { opts, data } = plotOf(models, perModel, times, width());
    const plot = new uPlot(opts, data, el);
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: HEIGHT }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [JSON.stringify(rows)]);

  if (models.length === 0) return <Empty>No requests in the last {days} days. Charged tokens will show here per day and model.</Empty>;
  const used = rows.filter((r) => r.charged_tokens > 0 || r.requests > 0).sort((a, b) => b.date.localeCompare(a.date));
  return (
    <figure class="chart">
      <div ref={box} class="chart-box" role="img" aria-label={`Tokens charged per day for the last ${days} days, by model`} />
      <details>
        <summary>The numbers behind the chart</summary>
        <ListTable columns={NUMBER_COLUMNS} rows={used} rowKey={(r) => `${r.date} ${r.model}`} />
      </details>
    </figure>
  );
}
