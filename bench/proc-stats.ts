/** CPU time, system calls and resident memory of a process and its descendants, and the machine's busy time, from /proc (Linux). */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

const TICK_MS = 1000 / (Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100);

/** The process and every descendant (nginx's worker, for one). */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        const kids = readFileSync(`/proc/${out[i]}/task/${tid}/children`, 'utf8').trim();
        if (kids) out.push(...kids.split(/\s+/).map(Number));
      } catch {
        // The thread ended meanwhile.
      }
    }
  }
  return out;
}

/** utime + stime of the whole tree, in ms. */
export function cpuMs(pid: number): number {
  let ticks = 0;
  for (const p of tree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may contain spaces: utime and stime are 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Exited meanwhile.
    }
  }
  return ticks * TICK_MS;
}

/** Read and write system calls (read, write, writev…) the whole tree has made: exact, whatever the machine's noise. */
export function syscalls(pid: number): number {
  let n = 0;
  for (const p of tree(pid)) {
    try {
      const io = readFileSync(`/proc/${p}/io`, 'utf8');
      n += Number(/^syscr: (\d+)/m.exec(io)?.[1] ?? 0) + Number(/^syscw: (\d+)/m.exec(io)?.[1] ?? 0);
    } catch {
      // Exited meanwhile.
    }
  }
  return n;
}

/** VmRSS of the whole tree, in KiB. */
export function rssKiB(pid: number): number {
  let kib = 0;
  for (const p of tree(pid)) {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kib += Number(m[1]);
    } catch {
      // Exited meanwhile.
    }
  }
  return kib;
}

/**
 * Time all cores together spent on processes (user, nice, system) or lost to the hypervisor (steal) since boot, in ms.
 * Interrupt time is left out: that is mostly the loopback traffic of the benchmark itself.
 */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, , , , , steal] = line.split(/\s+/).slice(1).map(Number);
  return (user + nice + system + steal) * TICK_MS;
}
