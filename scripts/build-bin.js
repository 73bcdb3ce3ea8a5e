// Marks the package's bin files executable. tsc writes every file 0644, and `npm run build` starts from an empty
// directory, so without this `npx tokenmeter` fails with "Permission denied" after any rebuild.
// Run by scripts/build.js (on its scratch directory, the first argument) and by the tests' global setup, after tsc.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
/** Where tsc wrote: the build's scratch directory, or dist/ itself. */
const OUT = path.resolve(process.argv[2] ?? path.join(ROOT, 'dist'));
const { bin } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

for (const file of Object.values(typeof bin === 'string' ? { bin } : (bin ?? {}))) {
  const target = path.join(OUT, path.relative('dist', file));
  // 0644 becomes 0755: executable by whoever may read it.
  fs.chmodSync(target, fs.statSync(target).mode | 0o111);
}
