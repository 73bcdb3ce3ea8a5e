/**
 * The Redis store's Lua is files a reader can open, and every number, payload and input shape a rule depends on is
 * TypeScript's: the scripts take KEYS and one JSON input (or at most five positional arguments), write no JSON of their
 * own, and hold no number but units and the layout of a UUID. A threshold or a keeping time written back into a .lua
 * file fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LUA_DIR, luaScript, luaWithEvents } from '../../src/store/redis/lua-scripts';

const ROOT = join(__dirname, '..', '..');

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => join(e.parentPath, e.name));
}

const luaFiles = filesUnder(LUA_DIR, '.lua').map((path) => ({ name: relative(LUA_DIR, path), text: readFileSync(path, 'utf8') }));

/** A file's code: comments and string literals dropped, so a number in a comment or a key name is not counted. */
function code(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/'(?:[^'\\]|\\.)*'/g, "''").replace(/--.*$/, ''))
    .join('\n');
}

/**
 * The numbers a script may write itself: 0 to 3 (indexes, offsets, steps), the units of time (ms in a second, seconds
 * in an hour and a day), where a UUID's dashes and hex digits are, and the place values of bytes read from hex, 8
 * digits at a time (helpers/settled-marks.lua).
 */
const UNITS_AND_LAYOUT = new Set([
  '0',
  '1',
  '2',
  '3',
  '1000',
  '3600',
  '86400',
  '9',
  '14',
  '19',
  '24',
  '16',
  '32',
  '36',
  '8',
  '256',
  '65536',
  '16777216',
]);

describe('the Redis store’s Lua files', () => {
  it('finds the scripts and their helpers', () => {
    expect(luaFiles.map((f) => f.name)).toEqual(expect.arrayContaining(['metering/settle.lua', 'helpers/budgets.lua', 'events/wrap.lua']));
    expect(luaFiles.length).toBeGreaterThan(40);
  });

  it('holds no number TypeScript owns: a threshold, a share, a keeping time or a retry time is passed in', () => {
    const found = luaFiles.flatMap(({ name, text }) =>
      [...code(text).matchAll(/(?<![\w.%[])(\d+(?:\.\d+)?)(?![\w.])/g)]
        .map((m) => m[1])
        .filter((n) => !UNITS_AND_LAYOUT.has(n))
        .map((n) => `${name}: ${n}`),
    );
    expect(found).toEqual([]);
  });

  it('scales no side of a comparison by a number of its own (a share of a budget is TypeScript’s)', () => {
    const scaled = luaFiles.flatMap(({ name, text }) =>
      code(text)
        .split('\n')
        .filter((line) => /[*/]\s*\d+\s*[<>]=?|[<>]=?\s*[\w.[\]]+\s*[*/]\s*\d/.test(line))
        .map((line) => `${name}: ${line.trim()}`),
    );
    expect(scaled).toEqual([]);
  });

  it('writes no JSON payload: events carry what TypeScript made', () => {
    const built = luaFiles.filter(({ text }) => /'\{"|"\{\\"|string\.format\('\{/.test(text)).map((f) => f.name);
    expect(built).toEqual([]);
  });

  it('reads at most five positional arguments, and never a run of them', () => {
    const over = luaFiles.flatMap(({ name, text }) => {
      const c = code(text);
      const highest = Math.max(0, ...[...c.matchAll(/ARGV\[(\d+)\]/g)].map((m) => Number(m[1])));
      return highest > 5 || /unpack\(ARGV|#ARGV|table\.remove\(ARGV/.test(c) ? [name] : [];
    });
    expect(over).toEqual([]);
  });

  it('leaves no Lua in the TypeScript of src/', () => {
    const withLua = filesUnder(join(ROOT, 'src'), '.ts').filter((path) => /redis\.p?call\(/.test(readFileSync(path, 'utf8')));
    expect(withLua.map((path) => relative(ROOT, path))).toEqual([]);
  });
});

describe('the Lua loader', () => {
  it('names each part it joins, includes a helper once, and fills a wrapped step’s slots in order', () => {
    const settle = luaScript('metering/settle.lua');
    const parts = [...settle.matchAll(/^-- part: (\S+)$/gm)].map((m) => m[1]);
    expect(parts).toEqual([
      'metering/settle.lua',
      'helpers/args.lua',
      'helpers/now-and-purge.lua',
      'helpers/account-levels.lua',
      'helpers/limit-functions.lua',
      'helpers/budgets.lua',
      'helpers/settled-marks.lua',
      'metering/settle-step.lua',
    ]);
    expect(settle).not.toMatch(/^--#/m);
    const wrapped = luaWithEvents('accounts/revoke.lua', { before: 'events/before-revoke.lua', after: 'events/after-revoke.lua' });
    const order = [...wrapped.matchAll(/^-- part: (\S+)$/gm)].map((m) => m[1]);
    expect(order).toEqual([
      'events/wrap.lua',
      'events/prologue.lua',
      'helpers/args.lua',
      'helpers/fill.lua',
      'events/before-revoke.lua',
      'accounts/revoke.lua',
      'events/after-revoke.lua',
    ]);
  });
});
