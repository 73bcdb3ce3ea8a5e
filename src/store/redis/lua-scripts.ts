/**
 * Assembles the store's Redis scripts from the .lua files under lua/ (shipped beside the compiled code: the build
 * copies them into dist/, scripts/build-lua.js). A file names what it uses in lines of its own: `--#include
 * helpers/x.lua` inserts that file, once per script; `--#slot name` inserts the file the caller gives for that slot
 * (events/wrap.lua's before, base and after). Each inserted file opens with `-- part: <path>`, so a line of the
 * assembled script (a Redis error names one) leads back to its file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the .lua files are: beside this module, in src/ as in dist/. */
export const LUA_DIR = join(__dirname, 'lua');

const DIRECTIVE = /^--#(include|slot) (\S+)\s*$/;

/** The script that `file` (a path under lua/) makes with its includes, and `slots` filled by the files given. */
export function luaScript(file: string, slots: Readonly<Record<string, string>> = {}): string {
  const seen = new Set<string>();
  const part = (path: string): string => {
    if (seen.has(path)) return '';
    seen.add(path);
    const lines = readFileSync(join(LUA_DIR, path), 'utf8').split('\n');
    const out = [`-- part: ${path}`];
    for (const line of lines) {
      const directive = DIRECTIVE.exec(line);
      if (directive === null) out.push(line);
      else if (directive[1] === 'include') out.push(part(directive[2]));
      else if (slots[directive[2]] !== undefined) out.push(part(slots[directive[2]]));
    }
    return out.join('\n');
  };
  return part(file);
}

/** The parts of a step that writes events: the step itself and what runs before and after it (events/wrap.lua). */
export interface EventHooks {
  before?: string;
  after: string;
}

/** `base` wrapped to write its events in the same step (events/wrap.lua). */
export function luaWithEvents(base: string, hooks: EventHooks): string {
  return luaScript('events/wrap.lua', { base, after: hooks.after, ...(hooks.before ? { before: hooks.before } : {}) });
}
