/** Starts the benchmark's processes (each pinned to a core when taskset exists) and makes sure every one of them dies. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

/** Whether `taskset` can pin processes here. */
export const canPin = spawnSync('taskset', ['-p', String(process.pid)]).status === 0;

const running = new Set<ChildProcess>();

/** Kills every process group still running; synchronous, so it also works from an 'exit' handler. */
function killAll(): void {
  for (const child of running) killGroup(child, 'SIGKILL');
  running.clear();
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Kills every process group this process started when it exits, fails or is interrupted. */
export function killAllOnExit(log: (line: string) => void): void {
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping every process`);
      process.exit(130);
    });
  }
}

/** Pins this process (all its threads) and so every child it spawns without a core of its own. */
export function pinSelf(core: number): void {
  if (canPin) spawnSync('taskset', ['-a', '-cp', String(core), String(process.pid)]);
}

export interface Started {
  pid: number;
  /** The JSON line the process printed when ready (`{}` for a process probed by port). */
  ready: Record<string, unknown>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** The core (or `taskset` core list, `0,1`) to pin it to; inherits ours when omitted. */
  core?: number | string;
  /** Ready when this port accepts connections; otherwise when the process prints a `{"ready":true,…}` line. */
  port?: number;
  timeoutMs?: number;
}

export async function startProcess(options: StartOptions): Promise<Started> {
  const [command, args] =
    options.core !== undefined && canPin
      ? ['taskset', ['-c', String(options.core), options.command, ...options.args]]
      : [options.command, options.args];
  // Its own process group, so stopping it also stops whatever it forks (nginx's worker).
  const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));

  const exited = new Promise<never>((_, reject) => {
    child.once('error', (err) => reject(new Error(`${options.name}: cannot start ${command}: ${err.message}`)));
    child.once('exit', (code, signal) =>
      reject(new Error(`${options.name} exited (${signal ?? code}) before it was ready: ${stderr.trim()}`)),
    );
  });
  exited.catch(() => {});
  const timeoutMs = options.timeoutMs ?? 20_000;
  const ready = options.port !== undefined ? waitForPort(options.port, Date.now() + timeoutMs).then(() => ({})) : readyLine(child);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${options.name} was not ready within ${timeoutMs} ms: ${stderr.trim()}`)), timeoutMs);
  });
  try {
    const line = await Promise.race([ready, exited, timedOut]);
    return { pid: child.pid as number, ready: line, stop: () => stop(child) };
  } catch (err) {
    killGroup(child, 'SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function stop(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
  // Reap what the group leader left behind.
  killGroup(child, 'SIGKILL');
}

function readyLine(child: ChildProcess): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let buffered = '';
    const onData = (c: Buffer) => {
      buffered += c.toString();
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.ready === true) {
          // Keep draining stdout so a chatty process never blocks on a full pipe.
          child.stdout?.off('data', onData);
          child.stdout?.resume();
          return resolve(parsed);
        }
      }
    };
    child.stdout?.on('data', onData);
  });
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`port ${port} did not open`);
}
