/**
 * Summarizes a V8 .cpuprofile as Markdown: CPU by package, the top functions by self time, and tokenmeter's own
 * functions by inclusive time (what each costs with everything it calls). Usage: tsx bench/cpu-profile-summary.ts FILE [FROM_MS]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: tokenmeter's src/, a package, node's internals, or V8's own pseudo-frames. */
function owner(url: string, fn: string): string {
  if (url === '') return fn.startsWith('(') ? fn : 'native';
  const src = /\/tokenmeter-bench\/(src|bench)\//.exec(url);
  if (src) return src[1] === 'src' ? 'tokenmeter' : 'bench';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node';
  return url;
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url
    .replace(/^.*\/tokenmeter-bench\//, '')
    .replace(/^.*node_modules\//, '')
    .replace(/^file:\/\//, '');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

const pct = (n: number, total: number) => `${((100 * n) / total).toFixed(1)} %`;

function rows(counts: Map<string, number>, total: number, limit: number): string {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, n]) => `| ${pct(n, total)} | \`${name}\` |`)
    .join('\n');
}

/**
 * The summary of the samples taken `fromMs` or later after the profile began (to leave out start-up and warm-up). Each
 * sample counts for the time until the next one, as DevTools counts it: a sample before a GC pause stands for the pause.
 */
export function summarize(profile: CpuProfile, fromMs = 0, limit = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const self = new Map<string, number>();
  const byOwner = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let total = 0;
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] / 1000;
    const node = byId.get(profile.samples[i]);
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (!node || t < fromMs || node.callFrame.functionName === '(idle)') continue;
    total += us;
    add(self, frameName(node), us);
    add(byOwner, owner(node.callFrame.url, node.callFrame.functionName), us);
    // Each tokenmeter function on the stack once, however deep it recurses.
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id) as ProfileNode;
      if (owner(frame.callFrame.url, frame.callFrame.functionName) !== 'tokenmeter') continue;
      const fname = frameName(frame);
      if (seen.has(fname)) continue;
      seen.add(fname);
      add(inclusive, fname, us);
    }
  }
  return `${(total / 1000).toFixed(0)} ms of CPU sampled (idle left out).

CPU by where the code lives:

| share | owner |
|---:|:---|
${rows(byOwner, total, limit)}

Top functions by self time:

| self | function |
|---:|:---|
${rows(self, total, limit)}

tokenmeter's functions by inclusive time (with everything they call):

| inclusive | function |
|---:|:---|
${rows(inclusive, total, limit)}
`;
}

if (require.main === module) {
  const [file, fromMs] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/cpu-profile-summary.ts FILE.cpuprofile [FROM_MS]');
    process.exit(2);
  }
  process.stdout.write(summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(fromMs ?? 0)));
}
