/**
 * `npm run build` (which `npm start` runs first) starts from an empty dist/, and tsc writes every file 0644: the
 * tokenmeter bin must come out executable, or `npx tokenmeter` fails with "Permission denied" after any rebuild.
 * The build runs in a scratch copy of the sources, so the dist/ other tests use is left alone.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);

describe('npm run build', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tm-build-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('leaves the tokenmeter bin executable, so npx tokenmeter keeps working after npm start rebuilds', async () => {
    for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(ROOT, file), join(scratch, file));
    for (const dir of ['src', 'web', 'scripts']) cpSync(join(ROOT, dir), join(scratch, dir), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'));

    await run('npm', ['run', 'build', '--silent'], { cwd: scratch });

    const bins: Record<string, string> = JSON.parse(readFileSync(join(scratch, 'package.json'), 'utf8')).bin;
    expect(Object.keys(bins)).toEqual(['tokenmeter']);
    const bin = join(scratch, bins.tokenmeter);
    expect((statSync(bin).mode & 0o777).toString(8)).toBe('755');
    // Run as npx runs it: the file itself, through its #! line.
    const { stdout } = await run(bin, ['--help'], { cwd: scratch });
    expect(stdout).toContain('Usage: tokenmeter');
  });
});
