/** bench/history.ts: each `npm run bench` adds one row of the judged target's medians to history.csv. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendHistory, HISTORY_HEADER, type HistoryRun } from '../../bench/history';

const machine = { cpu: 'AMD EPYC, 2.0 GHz', cores: 2, memoryGiB: 7.8, kernel: '6.1', os: 'Debian GNU/Linux 12' };

function run(commit: string, jsonCpu: number, judged = 'tokenmeter-redis'): HistoryRun {
  const at = (median: number) => ({ median, min: median - 0.1, max: median + 0.1 });
  return {
    commit,
    generatedAt: '2026-11-28T03:00:00.000Z',
    machine,
    targets: [
      { name: 'passthrough', label: 'passthrough' },
      {
        name: judged,
        label: 'tokenmeter (Redis)',
        rounds: [{}, {}, {}] as never,
        ratios: { jsonCpuUs: at(jsonCpu), streamCpuUs: at(2.07) },
        added: { jsonTtfbP99Ms: at(40.4) },
      },
    ],
  };
}

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'history-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const rows = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n');
const column = (file: string, row: number, name: string) => {
  const [header, ...rest] = rows(file);
  return rest[row].match(/("[^"]*"|[^,]*)(,|$)/g)?.[header.split(',').indexOf(name)]?.replace(/,$/, '');
};

test('a new file gets the header, then one row per run in order: a regression reads as a step down the column', () => {
  const file = join(dir, 'history.csv');
  expect(appendHistory(file, run('2987b5a', 1.97))).toBe(true);
  expect(appendHistory(file, run('abc1234, src modified', 2.31))).toBe(true);
  const lines = rows(file);
  expect(lines[0]).toBe(HISTORY_HEADER);
  expect(lines).toHaveLength(3);
  expect(column(file, 0, 'commit')).toBe('2987b5a');
  expect(column(file, 0, 'jsonCpuUs_ratio')).toBe('1.970');
  expect(column(file, 1, 'commit')).toBe('"abc1234, src modified"');
  expect(column(file, 1, 'jsonCpuUs_ratio')).toBe('2.310');
  expect(column(file, 1, 'streamCpuUs_ratio')).toBe('2.070');
  expect(column(file, 1, 'jsonTtfbP99Ms_added')).toBe('40.40');
  expect(column(file, 1, 'rounds')).toBe('3');
  expect(column(file, 1, 'machine')).toBe('"AMD EPYC, 2.0 GHz, 2 cores, 7.8 GiB, Debian GNU/Linux 12"');
  expect(column(file, 1, 'embeddingsCpuUs_ratio')).toBe('');
});

test('a file written under older headers is rewritten under the new one: each value kept in its column, one header line', () => {
  const file = join(dir, 'history.csv');
  writeFileSync(
    file,
    [
      'commit,date,machine,rounds,jsonCpuUs_ratio,jsonTtfbP99Ms_added',
      '998ea1a,2026-11-26,"vm, 2 cores",5,1.690,21.80',
      'commit,date,machine,rounds,streamCpuUs_ratio,jsonCpuUs_ratio',
      '78149ed,2026-11-28,vm,5,2.001,1.757',
    ].join('\n') + '\n',
  );
  appendHistory(file, run('2987b5a', 1.97));
  const lines = rows(file);
  expect(lines.filter((l) => l.startsWith('commit,'))).toEqual([HISTORY_HEADER]);
  expect(lines[0]).toBe(HISTORY_HEADER);
  expect(lines).toHaveLength(4);
  const read = (row: number) =>
    Object.fromEntries(
      ['commit', 'machine', 'jsonCpuUs_ratio', 'streamCpuUs_ratio', 'jsonTtfbP99Ms_added'].map((n) => [n, column(file, row, n)]),
    );
  expect(read(0)).toEqual({
    commit: '998ea1a',
    machine: '"vm, 2 cores"',
    jsonCpuUs_ratio: '1.690',
    streamCpuUs_ratio: '',
    jsonTtfbP99Ms_added: '21.80',
  });
  expect(read(1)).toEqual({
    commit: '78149ed',
    machine: 'vm',
    jsonCpuUs_ratio: '1.757',
    streamCpuUs_ratio: '2.001',
    jsonTtfbP99Ms_added: '',
  });
  expect(read(2)).toMatchObject({ commit: '2987b5a', jsonCpuUs_ratio: '1.970' });
  appendHistory(file, run('def5678', 1.5));
  expect(rows(file)).toHaveLength(5);
  expect(column(file, 3, 'jsonCpuUs_ratio')).toBe('1.500');
});

test('a run without the judged target writes nothing', () => {
  const file = join(dir, 'history.csv');
  expect(appendHistory(file, run('2987b5a', 1.97, 'tokenmeter-memory'))).toBe(false);
  expect(() => readFileSync(file)).toThrow();
});
