/**
 * Where a worker thread's entry file is and how to load it: beside the module that starts it, with that module's own
 * extension, and under the tests (which run the TypeScript sources) through tsx; from dist/, plain JavaScript.
 */
import { dirname, extname, join } from 'node:path';

export interface ThreadEntry {
  file: string;
  execArgv: string[];
}

/** The entry `name` beside `starter` (the starting module's `__filename`). */
export function threadEntry(starter: string, name: string): ThreadEntry {
  const ext = extname(starter);
  return {
    file: join(dirname(starter), `${name}${ext}`),
    execArgv: ext === '.ts' ? ['--require', 'tsx/cjs'] : [],
  };
}
