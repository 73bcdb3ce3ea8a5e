/** README's folder table is `ls src/`: one row per folder, in the same order, none missing and none gone. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

test("README's folder table lists exactly the folders of src/, in ls order", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const rows = [...readme.matchAll(/^\| `src\/([^`/]+)\/` +\|/gm)].map((m) => m[1]);
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  expect(rows).toEqual(folders);
});
