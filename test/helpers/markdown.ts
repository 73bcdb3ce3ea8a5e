/** Reading the manual as GitHub renders it: its pages, their tables, their headings' anchors and their links. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');

/** README.md and every docs/*.md, as paths from the repository's root. */
export function manualPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

export const readDoc = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The text's lines outside fenced code blocks (a `# comment` in a shell block is no heading, a `[x](y)` there no link). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/**
 * The rows (cells, trimmed) of the first table in `text` whose first header is `header`; `path` names the page in the
 * error when there is none.
 */
export function tableRows(text: string, header: string, path: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^\\|\\s*${header}\\s*\\|`).test(line));
  if (start < 0) throw new Error(`${path} has no table headed ${header}`);
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    rows.push(
      lines[i]
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces made hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link's text stays, its target goes
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the page's headings make, with GitHub's `-1`, `-2` … for repeated ones. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

/** The targets of the page's inline links and images (`[text](target)`), outside code, as written. */
export function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
    const ref = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (ref) targets.push(ref[1]);
  }
  return targets;
}
