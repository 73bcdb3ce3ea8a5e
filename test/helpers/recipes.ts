/**
 * Runs a docs page's recipes as written: the fenced blocks the page marks, on the line before the fence (blank lines
 * aside), with `<!-- recipe -->` (shell commands run in order, each must exit 0), `<!-- recipe: background URL -->` (a long-running
 * process, waited on until URL answers 2xx and stopped at the end), `<!-- recipe: file PATH -->` (written to PATH in the
 * page's scratch dir), or `<!-- example -->` (shown, deliberately not run).
 *
 * Each page runs with bash in a fresh temp dir, with what the docs promise a user in a checkout has: `tokenmeter` and
 * `npx tokenmeter` run this checkout's built CLI, `npm start` and `npm run mock-upstream` run in the checkout. The
 * pages' ports (`localhost:8080`, `127.0.0.1:8000`, `PORT=`/`MOCK_PORT=` values, a server's `.listen(3000)`) are mapped to free ones, so runs on one
 * machine never collide; exports and `cd` carry from one block to the next, as in one terminal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { claimPort } from './ports';

const ROOT = join(__dirname, '..', '..');
/** How long one block may run, and a background process may take to answer. */
const BLOCK_BOUND_MS = 90_000; // a cold build (a path install runs tokenmeter's prepare) takes up to ~45 s here
const BACKGROUND_BOUND_MS = 30_000;

export type RecipeBlock =
  | { kind: 'run'; line: number; lang: string; body: string }
  | { kind: 'background'; line: number; lang: string; body: string; url: string }
  | { kind: 'file'; line: number; lang: string; body: string; path: string }
  | { kind: 'example'; line: number; lang: string; body: string }
  | { kind: 'unmarked'; line: number; lang: string; body: string };

const MARKER = /^<!--\s*(recipe|example)(?::\s*(background|file)\s+(\S+))?\s*-->\s*$/;

/** The page's fenced blocks in order, each with its marker's meaning (`unmarked` without one); `line` is 1-based. */
export function recipeBlocks(text: string): RecipeBlock[] {
  const lines = text.split('\n');
  const blocks: RecipeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+|~~~+)\s*(\S*)/.exec(lines[i]);
    if (!open) continue;
    // A block in a list item is indented: its lines lose the fence's indentation.
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end].trimStart().startsWith(fence)) end++;
    const body = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
      .join('\n');
    const base = { line: i + 1, lang, body: `${body}\n` };
    // Prettier puts a blank line between an HTML comment and the fence after it: the marker is the last line before.
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const marker = before >= 0 ? MARKER.exec(lines[before].trim()) : null;
    if (!marker) blocks.push({ kind: 'unmarked', ...base });
    else if (marker[1] === 'example') blocks.push({ kind: 'example', ...base });
    else if (marker[2] === 'background') blocks.push({ kind: 'background', ...base, url: marker[3] });
    else if (marker[2] === 'file') blocks.push({ kind: 'file', ...base, path: marker[3] });
    else blocks.push({ kind: 'run', ...base });
    i = end;
  }
  return blocks;
}

export interface RecipeRun {
  /** The scratch dir the page ran in (removed by `stop`). */
  dir: string;
  /** Everything each block printed, in order, for a failure's message. */
  transcript: string[];
  /** The free port that stands for a port the page names. */
  port(written: number): number;
  /** Stops every background process (SIGTERM, then SIGKILL after 5 s) and removes the scratch dir. */
  stop(): Promise<void>;
}

export interface RecipeOptions {
  /** Variables every block sees (REDIS_URL, …), beside PATH and the ports. */
  env?: Record<string, string>;
  /** Ports the page names that stand for a server the test runs (5432: the test's PostgreSQL); others get free ones. */
  ports?: Record<number, number>;
  /** Symlinks made in the scratch dir before the first block: name → target (`tokenmeter` → the checkout). */
  links?: Record<string, string>;
}

/** Runs the page's marked blocks in order; rejects with the transcript at the first that fails. Call `stop` after. */
export async function startRecipes(text: string, options: RecipeOptions = {}): Promise<RecipeRun> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-recipe-'));
  const bin = join(dir, '.bin');
  mkdirSync(bin);
  writeShims(bin);
  const state = join(dir, '.state');
  writeFileSync(state, `cd ${JSON.stringify(dir)}\n`);

  for (const [name, target] of Object.entries(options.links ?? {})) symlinkSync(target, join(dir, name));
  const ports = new Map<number, number>();
  const port = (written: number) => ports.get(written)!;
  const mapPorts = async (s: string): Promise<string> => {
    const written = [
      ...[...s.matchAll(/(?:localhost|127\.0\.0\.1):(\d{4,5})\b/g)].map((m) => Number(m[1])),
      ...[...s.matchAll(/\b(?:MOCK_PORT|PORT)=(\d{4,5})\b/g)].map((m) => Number(m[1])),
      ...[...s.matchAll(/\.listen\((\d{4,5})\b/g)].map((m) => Number(m[1])),
    ];
    for (const p of written) if (!ports.has(p)) ports.set(p, await claimPort());
    return s
      .replace(/(?:localhost|127\.0\.0\.1):(\d{4,5})\b/g, (_, p: string) => `127.0.0.1:${port(Number(p))}`)
      .replace(/\b(MOCK_PORT|PORT)=(\d{4,5})\b/g, (_, name: string, p: string) => `${name}=${port(Number(p))}`)
      .replace(/\.listen\((\d{4,5})\b/g, (_, p: string) => `.listen(${port(Number(p))}`);
  };
  for (const [written, actual] of Object.entries(options.ports ?? {})) ports.set(Number(written), actual);
  for (const p of [8080, 8000]) if (!ports.has(p)) ports.set(p, await claimPort());
  const env: Record<string, string> = {
    ...networkEnv(),
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? dir,
    TMPDIR: tmpdir(),
    TOKENMETER_ROOT: ROOT,
    PORT: String(port(8080)),
    MOCK_PORT: String(port(8000)),
    TOKENMETER_URL: `http://127.0.0.1:${port(8080)}`,
    UPSTREAM_URL: `http://127.0.0.1:${port(8000)}/v1`,
    // Settlements kept across restarts: in the scratch dir, never the checkout's data/.
    JOURNAL_FILE: join(dir, 'settlements.journal'),
    LOG_LEVEL: 'warn',
    ...options.env,
  };

  const transcript: string[] = [];
  const background: ChildProcess[] = [];
  const run: RecipeRun = {
    dir,
    transcript,
    port,
    stop: async () => {
      await Promise.all(background.map(stopGroup));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const block of recipeBlocks(text)) {
      if (block.kind === 'file') {
        const path = join(dir, block.path);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, await mapPorts(block.body));
      } else if (block.kind === 'run') {
        const script = `source ${JSON.stringify(state)}\nset -eo pipefail\n${await mapPorts(block.body)}\nexport -p > ${JSON.stringify(state)}; echo "cd $(printf %q "$PWD")" >> ${JSON.stringify(state)}\n`;
        const { code, output } = await runBash(script, env);
        transcript.push(`--- block at line ${block.line} (exit ${code}):\n${output}`);
        if (code !== 0) throw new Error(`the recipe at line ${block.line} exited with ${code}`);
      } else if (block.kind === 'background') {
        const url = await mapPorts(block.url);
        const child = spawn('bash', ['-c', `source ${JSON.stringify(state)}\n${await mapPorts(block.body)}`], {
          env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        background.push(child);
        let output = '';
        child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
        child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
        transcript.push(`--- background at line ${block.line}, waiting for ${url}`);
        try {
          await answers(url, child, BACKGROUND_BOUND_MS);
        } finally {
          transcript.push(output);
        }
      }
    }
  } catch (err) {
    await run.stop();
    (err as Error).message += `\n${transcript.join('\n')}`;
    throw err;
  }
  return run;
}

/** Polls `url` until it answers 2xx; throws when the process exits first or past the bound. */
async function answers(url: string, child: ChildProcess, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  let last = 'no answer yet';
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`it exited (${child.exitCode ?? child.signalCode}) before ${url} answered`);
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${boundMs} ms: ${last}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `tokenmeter` and `npx tokenmeter` as this checkout's bin; `npm start` and `npm run mock-upstream` in the checkout. */
function writeShims(bin: string): void {
  const cli = join(ROOT, 'dist', 'cli', 'cli.js');
  const shims: Record<string, string> = {
    tokenmeter: `exec node ${JSON.stringify(cli)} "$@"`,
    npx: `if [ "$1" = tokenmeter ]; then shift; exec node ${JSON.stringify(cli)} "$@"; fi\nexec ${realCommand('npx')} "$@"`,
    npm: `if [ "$1" = start ] || [ "$1 $2" = "run mock-upstream" ]; then cd ${JSON.stringify(ROOT)}; fi\nexec ${realCommand('npm')} "$@"`,
  };
  for (const [name, body] of Object.entries(shims)) {
    writeFileSync(join(bin, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
}

/**
 * What a user's terminal carries for reaching the npm registry: proxies and the certificate authorities a proxy
 * signs with (NODE_EXTRA_CA_CERTS, …), and npm's own registry settings. Without them a recipe's `npm install` retried
 * SELF_SIGNED_CERT_IN_CHAIN until its bound on Node 24, on a machine whose registry is reached through such a proxy.
 */
function networkEnv(): Record<string, string> {
  const passed =
    /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|(HTTPS?|NO|ALL)_PROXY|NPM_CONFIG_(REGISTRY|CAFILE|CA|STRICT_SSL|PROXY|HTTPS_PROXY|NOPROXY))$/i;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && passed.test(name)) env[name] = value;
  return env;
}

/** The command's path on this PATH (outside the shims). */
function realCommand(name: string): string {
  for (const d of (process.env.PATH ?? '').split(':')) {
    const candidate = join(d, name);
    try {
      accessSync(candidate, constants.X_OK);
      return JSON.stringify(candidate);
    } catch {
      // not here
    }
  }
  return name;
}

/** Runs a script with bash in its own process group, killed whole past the bound. */
function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => {
      output += `\n(killed after ${BLOCK_BOUND_MS} ms)`;
      killGroup(child, 'SIGKILL');
    }, BLOCK_BOUND_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** SIGTERM to the process group, SIGKILL if it has not exited within 5 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return killGroup(child, 'SIGKILL');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
  // Whatever it started that outlived it (npm's children) goes too.
  killGroup(child, 'SIGKILL');
}
