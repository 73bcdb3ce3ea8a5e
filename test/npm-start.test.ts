/**
 * `npm start` on a fresh clone builds once; started again with nothing changed it skips the build (about a second to its first answer, not 15),
 * and a rebuild swaps dist/ in whole, never deleting it under a proxy that runs from it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { freshCopy } from './helpers/fresh-copy';

jest.setTimeout(240_000);

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Runs `npm start` in `dir` (in a process group of its own, so stop() ends npm and node alike). */
async function npmStart(dir: string): Promise<Started> {
  const child = spawn('npm', ['start'], {
    cwd: dir,
    detached: true,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', JOURNAL_FILE: join(dir, 'journal') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen:\n${out}`)), 180_000);
    child.stdout!.on('data', () => {
      const m = /"port":(\d+)[^\n]*"msg":"tokenmeter listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1]}`);
      }
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${out}`)));
  });
  expect(await status(`${url}/healthz`)).toBe(200);
  return { child, url, output: () => out };
}

/** GET `url` on a connection of its own (a kept-alive one would hold a stopping proxy's drain open). */
function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

/** Ends npm and the proxy under it (its process group). */
function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    process.kill(-child.pid!, 'SIGKILL');
  });
}

describe('npm start', () => {
  const clone = freshCopy();
  const running: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of running) await stop(child);
    clone.remove();
  });

  it('builds on a fresh clone, then starts without building while nothing changed', async () => {
    const first = await npmStart(clone.dir);
    running.push(first.child);
    expect(first.output()).toContain('console: JavaScript');
    await stop(first.child);
    const stamp = statSync(join(clone.dir, 'dist', '.build-stamp')).mtimeMs;

    const second = await npmStart(clone.dir);
    running.push(second.child);
    expect(second.output()).toContain('dist/ is up to date');
    expect(second.output()).not.toContain('console: JavaScript');
    expect(statSync(join(clone.dir, 'dist', '.build-stamp')).mtimeMs).toBe(stamp);
    // Speed is the bench's to measure (the house asserts no timings): what this pins is that nothing is built in between.
  });

  it('rebuilds after a source changes, swapping dist/ in under a proxy that keeps serving from it', async () => {
    const serving = await npmStart(clone.dir);
    running.push(serving.child);
    const source = join(clone.dir, 'src', 'server.ts');
    const later = new Date(Date.now() + 1_000);
    utimesSync(source, later, later);

    const rebuilt = await npmStart(clone.dir);
    running.push(rebuilt.child);
    expect(rebuilt.output()).toContain('console: JavaScript');
    expect(readFileSync(join(clone.dir, 'dist', '.build-stamp'), 'utf8')).toMatch(/^\d{4}-/);
    // The first proxy still answers, its console assets included: dist/ was replaced, not emptied under it.
    expect(await status(`${serving.url}/healthz`)).toBe(200);
    expect(await status(`${serving.url}/console/`)).toBe(200);
  });
});
