// Builds dist/ (tsc, the Redis store's Lua files, the executable bin, the console bundle) into a scratch directory beside it and swaps it in with
// two renames, so a proxy already running from dist/ never finds its files half-written or gone.
// `--if-stale` (what `npm start` runs first) builds only when a source is newer than the last build: a second start
// with nothing changed skips the 15 s of tsc and esbuild.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
/** Written last into a finished build; its mtime is when that build started reading the sources. */
const STAMP = '.build-stamp';
/** What a build reads: a change to any of them makes dist/ stale. */
const SOURCES = ['src', 'web', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest mtime (ms) under `file`, skipping node_modules; 0 when it does not exist. */
function newest(file) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let max = stat.mtimeMs;
  for (const entry of fs.readdirSync(file)) {
    if (entry !== 'node_modules') max = Math.max(max, newest(path.join(file, entry)));
  }
  return max;
}

function isStale() {
  let built;
  try {
    built = fs.statSync(path.join(DIST, STAMP)).mtimeMs;
  } catch {
    return true;
  }
  return SOURCES.some((source) => newest(path.join(ROOT, source)) > built);
}

function build() {
  const started = new Date();
  const out = fs.mkdtempSync(path.join(ROOT, 'dist.build-'));
  fs.chmodSync(out, 0o755); // mkdtemp makes it 0700; dist/ is read by whoever runs the proxy.
  const node = (args) => execFileSync(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
  try {
    node([path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', out]);
    node([path.join(__dirname, 'build-lua.js'), out]);
    node([path.join(__dirname, 'build-bin.js'), out]);
    node([path.join(__dirname, 'build-console.js'), out]);
    fs.writeFileSync(path.join(out, STAMP), `${started.toISOString()}\n`);
    fs.utimesSync(path.join(out, STAMP), started, started);
  } catch (err) {
    fs.rmSync(out, { recursive: true, force: true });
    throw err;
  }
  // rename(2) cannot replace a non-empty directory: the old dist/ steps aside first. A process running from it keeps
  // the modules it loaded; the paths it still opens (dist/web, a lazy require) now find the new build.
  const old = fs.existsSync(DIST) ? `${out}.old` : undefined;
  if (old) fs.renameSync(DIST, old);
  fs.renameSync(out, DIST);
  if (old) fs.rmSync(old, { recursive: true, force: true });
}

if (process.argv.includes('--if-stale') && !isStale()) {
  console.log('build: dist/ is up to date with src/, web/ and scripts/; skipping the build');
} else {
  try {
    build();
  } catch (err) {
    console.error(`build failed: ${err.message}`);
    process.exit(1);
  }
}
