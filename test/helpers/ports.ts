/**
 * Ports for servers whose port must be known before they bind it (a Redis that starts after the proxy dials it, a
 * server restarted on its port, an address where nothing listens). Never an ephemeral port: those are where the kernel
 * picks every outgoing connection's source port, so any process could take one meanwhile. A port comes from outside
 * /proc/sys/net/ipv4/ip_local_port_range, claimed by an O_EXCL file under the tmp dir (shared by every test process on
 * the machine, whatever its worktree), checked bindable, and given back when the process exits. Servers that can bind
 * port 0 themselves do, and report what they got; this is for the others.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR = join(tmpdir(), 'tokenmeter-ports');
const claimed = new Set<number>();

/** The ports outside the kernel's ephemeral range that tests may claim: below it when there is room, else above. */
export function claimablePorts(rangeFile = '/proc/sys/net/ipv4/ip_local_port_range'): { from: number; to: number } {
  let [low, high] = [32_768, 60_999];
  try {
    [low, high] = readFileSync(rangeFile, 'utf8').trim().split(/\s+/).map(Number);
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152; Linux's default is assumed.
  }
  // Below 10000 sit many well-known services; below the range's start there are usually ~20,000 ports left.
  return low - 10_000 >= 1_000 ? { from: 10_000, to: low - 1 } : { from: high + 1, to: 65_535 };
}

/** A port no other test process holds and nothing listens on, kept for this process until it exits. */
export async function claimPort(): Promise<number> {
  const { from, to } = claimablePorts();
  mkdirSync(DIR, { recursive: true });
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (!lock(port)) continue;
    claimed.add(port);
    // Something outside the tests (a service) may listen there: keep the claim (it stays unusable) and move on.
    if (await bindable(port)) return port;
  }
  throw new Error(`no claimable port in ${from}-${to} after 100 tries (see ${DIR})`);
}

/** Gives a claimed port back before the process exits. */
export function releasePort(port: number): void {
  if (!claimed.delete(port)) return;
  try {
    unlinkSync(join(DIR, String(port)));
  } catch {
    // Already gone.
  }
}

process.on('exit', () => {
  for (const port of [...claimed]) releasePort(port);
});

/** Creates the port's claim file exclusively; a file left by a process that died (SIGKILL) is taken over once. */
function lock(port: number, takeover = true): boolean {
  const path = join(DIR, String(port));
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (!takeover || !claimDied(path)) return false;
  try {
    unlinkSync(path);
  } catch {
    return false;
  }
  return lock(port, false);
}

/** Whether the claim's process is gone (an empty file is a claim being written: alive). */
function claimDied(path: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path, 'utf8'));
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Whether a server's output says its port was taken (redis-server's and PostgreSQL's words for EADDRINUSE). */
export function addressInUse(output: string): boolean {
  return /Address already in use/i.test(output);
}
