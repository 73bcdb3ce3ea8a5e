// Copies the Redis store's Lua files (src/store/redis/lua/**/*.lua) into dist/, beside the compiled loader that reads
// them (src/store/redis/lua-scripts.ts): tsc copies only TypeScript. Run by scripts/build.js (on its scratch directory,
// the first argument) and by the tests' global setup, after tsc.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const from = path.join(ROOT, 'src', 'store', 'redis', 'lua');
const to = path.join(path.resolve(process.argv[2] ?? path.join(ROOT, 'dist')), 'store', 'redis', 'lua');

fs.rmSync(to, { recursive: true, force: true });
fs.cpSync(from, to, { recursive: true, filter: (src) => fs.statSync(src).isDirectory() || src.endsWith('.lua') });
