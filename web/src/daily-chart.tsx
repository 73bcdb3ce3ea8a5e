/** Tokens charged per day (UTC) for the last N days, one line per model (uPlot, canvas), with the numbers as a table. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { DailyUsage } from './api-types';
import { tokens } from './format';
import { Empty } from './ui';

const PALETTE = ['#1f5fbf', '#c2410c', '#15803d', '#7e22ce', '#b91c1c', '#0f766e', '#a16207', '#be185d'];
const DAY_MS = 86_400_000;

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

export function DailyChart({ rows, days }: { rows: DailyUsage[]; days: number }) {
  const box = useRef<HTMLDivElement>(null);
  const { keys, times } = lastDays(days);
  const models = [...new Set(rows.map((r) => r.model))].sort();
  const series = models.map((model) => {
    const byDay = new Map(rows.filter((r) => r.model === model).map((r) => [r.date, r.charged_tokens]));
    return keys.map((k) => byDay.get(k) ?? 0);
  });

  useEffect(() => {
    const el = box.current;
    if (!el || models.length === 0) return;
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 260,
        scales: { x: { time: true } },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => tokens(t)), size: 70 }],
        series: [
          { label: 'Day', value: (_u, t) => (t == null ? '—' : new Date(t * 1000).toISOString().slice(0, 10)) },
          ...models.map((model, i) => ({
            label: model,
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            points: { show: true, size: 6 },
            value: (_u: uPlot, v: number | null) => (v == null ? '—' : tokens(v)),
          })),
        ],
      },
      [times, ...series],
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 260 }));
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
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Model</th>
              <th scope="col">Requests</th>
              <th scope="col">Charged tokens</th>
            </tr>
          </thead>
          <tbody>
            {used.map((r) => (
              <tr key={`${r.date} ${r.model}`}>
                <td data-label="Day">{r.date}</td>
                <td data-label="Model">{r.model}</td>
                <td data-label="Requests">{tokens(r.requests)}</td>
                <td data-label="Charged">{tokens(r.charged_tokens)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
