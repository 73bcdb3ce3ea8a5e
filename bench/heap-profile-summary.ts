/**
 * The summary of a sampling heap profile (`npm run bench:alloc -- --profile`): bytes allocated per request by the
 * function that allocated them, and by the src/ or package frame nearest above it, largest first. Also usable alone:
 * `npx tsx bench/heap-profile-summary.ts FILE REQUESTS`.
 */
import { readFileSync } from 'node:fs';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  callFrame: Frame;
  selfSize: number;
  children: ProfileNode[];
}

const where = (f: Frame) => {
  const url = f.url.replace(/^file:\/\//, '');
  const at = url.search(/\/(src|bench|node_modules)\//);
  const file = at === -1 ? url || '(native)' : url.slice(at + 1);
  return `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
};
/** Our own code or a package's, not Node's internals: where an allocation is attributed to a reason. */
const owned = (f: Frame) => /\/(src|node_modules)\//.test(f.url);

export function summarizeHeap(root: ProfileNode, requests: number, top = 25): string {
  const self = new Map<string, number>();
  const owner = new Map<string, number>();
  let total = 0;
  const walk = (n: ProfileNode, nearest: string) => {
    const here = owned(n.callFrame) ? where(n.callFrame) : nearest;
    if (n.selfSize > 0) {
      total += n.selfSize;
      const name = where(n.callFrame);
      self.set(name, (self.get(name) ?? 0) + n.selfSize);
      owner.set(here, (owner.get(here) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c, here);
  };
  walk(root, '(no src or package frame)');
  const kib = (bytes: number) => (bytes / 1024 / requests).toFixed(2);
  const rows = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, bytes]) => `| ${kib(bytes)} | ${name} |`)
      .join('\n');
  return [
    `${kib(total)} KiB sampled per request over ${requests} requests`,
    '',
    '| KiB per request | allocated by |',
    '|--:|:--|',
    rows(self),
    '',
    '| KiB per request | nearest src/ or package frame |',
    '|--:|:--|',
    rows(owner),
  ].join('\n');
}

if (require.main === module) {
  const [file, requests] = process.argv.slice(2);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode };
  process.stdout.write(`${summarizeHeap(profile.head, Number(requests ?? 1))}\n`);
}
