/**
 * BENCH_EARLIER=<git revision>: tokenmeter as it was at that revision, built from a temporary git worktree and
 * measured in every round beside today's, on the same Redis (a database of its own): what the changes since then
 * cost a request that does not use them. The revision must have bench/tokenmeter-server.ts (any since the
 * benchmark was added) and build with today's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNodeArgs } from '../test/helpers/processes';
import type { StartOptions } from './processes';
import { copyLua, TOKENMETER_ENV } from './servers';

const ROOT = join(__dirname, '..');

export interface EarlierBuild {
  /** The revision as given, and its short hash. */
  label: string;
  /** Its compiled bench/tokenmeter-server.js. */
  server: string;
  /** Removes the worktree. */
  cleanup(): void;
}

export function buildEarlier(revision: string): EarlierBuild {
  const git = (...args: string[]) => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).trim();
  const hash = git('rev-parse', '--short', `${revision}^{commit}`);
  const dir = join(mkdtempSync(join(tmpdir(), 'tm-bench-earlier-')), 'tree');
  git('worktree', 'add', '--detach', dir, hash);
  let removed = false;
  const cleanup = () => {
    if (removed) return;
    removed = true;
    process.off('exit', cleanup);
    try {
      git('worktree', 'remove', '--force', dir);
    } catch {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  // Also when the run fails or is interrupted (killAllOnExit turns SIGINT and SIGTERM into an exit).
  process.once('exit', cleanup);
  try {
    if (!existsSync(join(dir, 'bench/tokenmeter-server.ts'))) throw new Error(`${revision} has no bench/tokenmeter-server.ts`);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', join(dir, 'bench/tsconfig.servers.json'), '--outDir', join(dir, 'build')], {
      stdio: 'inherit',
    });
    copyLua(dir, join(dir, 'build'));
    return { label: revision === hash ? hash : `${revision} (${hash})`, server: join(dir, 'build/bench/tokenmeter-server.js'), cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/**
 * How to start it: on a Redis database of its own (`/1`), since its key layout may differ from today's, and with
 * today's `npm start` node flags, so that the code is what differs and not the runtime's settings.
 */
export function earlierProcess(build: EarlierBuild, label: string, upstreamUrl: string, redisUrl: string): StartOptions {
  return {
    name: label,
    command: process.execPath,
    args: ['--expose-gc', ...startNodeArgs(), build.server],
    env: { ...process.env, ...TOKENMETER_ENV, PORT: '0', UPSTREAM_URL: `${upstreamUrl}/v1`, REDIS_URL: `${redisUrl}/1` },
  };
}

/** The working tree as it is (uncommitted changes included), compiled into a temporary directory of its own. */
export function buildWorkingTree(): EarlierBuild {
  const dir = mkdtempSync(join(tmpdir(), 'tm-bench-here-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', cleanup);
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'bench/tsconfig.servers.json'), '--outDir', dir], { stdio: 'inherit' });
  copyLua(ROOT, dir);
  // The compiled files resolve their packages from the nearest node_modules up the tree: give them ours.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { label: 'working tree', server: join(dir, 'bench/tokenmeter-server.js'), cleanup };
}
