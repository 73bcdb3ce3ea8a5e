/** Runs the built proxy and CLI as separate processes, the way users start them. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
/** How long a proxy process may take to print its "listening" line. */
const START_BOUND_MS = 30_000;

export interface ProxyProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the process printed. */
  output(): string;
  /** Resolves with the exit code once the process has exited on its own. */
  exited(): Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The node flags `npm start` runs the server with (package.json's start script: `node [flags] dist/server.js`). */
export function startNodeArgs(): string[] {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(' ').filter((word) => word.startsWith('--'));
}

/** Starts `node dist/server.js` on a free port, with `npm start`'s node flags, and waits for its "listening" line. */
export async function startProxyProcess(env: Record<string, string>): Promise<ProxyProcess> {
  const child = spawn(process.execPath, [...startNodeArgs(), join(ROOT, 'dist', 'server.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // A journal of its own, never one in the working tree.
      JOURNAL_FILE: join(mkdtempSync(join(tmpdir(), 'tm-journal-')), 'journal'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    // Bounded by what a loaded 2-core machine needs (a cold node start with the console and the tokenizer's worker can
    // take seconds there); a process that never says it listens is killed, so no test leaves one behind.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`proxy did not print "tokenmeter listening" within ${START_BOUND_MS} ms:\n${out}`));
    }, START_BOUND_MS);
    const check = () => {
      const m = /"port":(\d+)[^\n]*"msg":"tokenmeter listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`proxy exited with ${code}:\n${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output: () => out,
    exited: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
      }),
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli/cli.js ...args`, with `input` on its standard input (closed at once without). */
export function runCli(args: string[], env: Record<string, string> = {}, input = ''): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [join(ROOT, 'dist', 'cli', 'cli.js'), ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin!.end(input);
  });
}
