/**
 * A fresh clone as a newcomer has it: the repository's files (tracked and new, as `git ls-files` lists them) copied into
 * a temporary directory, with this checkout's node_modules linked in place of `npm ci`, and no dist/.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface FreshCopy {
  dir: string;
  remove(): void;
}

export function freshCopy(): FreshCopy {
  const dir = mkdtempSync(join(tmpdir(), 'tm-clone-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    // A file deleted in the working tree but still in the index is not in the clone either.
    try {
      cpSync(join(ROOT, file), join(dir, file));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
