// Bundles the browser console (web/) into dist/web with esbuild, and prints and enforces its gzipped size.
// Run by scripts/build.js after tsc, into its scratch directory (the first argument; dist/ without one); the server
// serves dist/web at /console.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const esbuild = require('esbuild');

const ROOT = path.join(__dirname, '..');
const OUT = path.join(path.resolve(process.argv[2] ?? path.join(ROOT, 'dist')), 'web');
/** The budget for all of the console's JavaScript, gzipped. */
const JS_BUDGET_BYTES = 150 * 1024;

async function main() {
  fs.rmSync(OUT, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: { console: path.join(ROOT, 'web', 'src', 'main.tsx') },
    outdir: path.join(OUT, 'assets'),
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2020'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(ROOT, 'web', 'tsconfig.json'),
    legalComments: 'none',
    logLevel: 'warning',
  });
  fs.copyFileSync(path.join(ROOT, 'web', 'index.html'), path.join(OUT, 'index.html'));

  let js = 0;
  for (const name of fs.readdirSync(path.join(OUT, 'assets')).sort()) {
    const bytes = fs.readFileSync(path.join(OUT, 'assets', name));
    const gzipped = zlib.gzipSync(bytes, { level: 9 }).length;
    if (name.endsWith('.js')) js += gzipped;
    console.log(`console: ${name} ${(bytes.length / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped`);
  }
  console.log(`console: JavaScript ${(js / 1024).toFixed(1)} KB gzipped (budget ${JS_BUDGET_BYTES / 1024} KB)`);
  if (js > JS_BUDGET_BYTES) throw new Error('the console JavaScript is over its budget');
}

main().catch((err) => {
  console.error(`console build failed: ${err.message}`);
  process.exit(1);
});
