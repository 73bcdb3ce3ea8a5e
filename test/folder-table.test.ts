/** docs/development.md's folder table is `ls src/`: one row per folder, in the same order, none missing and none gone. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readDoc, ROOT } from './helpers/markdown';

test("docs/development.md's folder table lists exactly the folders of src/, in ls order", () => {
  const page = readDoc('docs/development.md');
  const rows = [...page.matchAll(/^\| `src\/([^`/]+)\/` +\|/gm)].map((m) => m[1]);
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  expect(rows).toEqual(folders);
});
