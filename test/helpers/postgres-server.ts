/**
 * Starts a throwaway real PostgreSQL server from Debian's binaries (/usr/lib/postgresql/<version>/bin) in a temp dir
 * on a loopback port claimed outside the ephemeral range (ports.ts; PostgreSQL cannot bind port 0), another one when
 * that port was taken anyway, like redis-server.ts does for Redis. PostgreSQL refuses to run as root, so under root
 * (tests and CI) it runs as the `postgres` OS user (runuser), in a dir chowned to it. It can be stopped and started
 * again on the same data (the archive's fault tests), and is removed by `destroy`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { addressInUse, claimPort } from './ports';

export interface PostgresServer {
  url: string;
  port: number;
  /** Stops it at once (as a crash would); the data stays for `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its dir. */
  destroy(): Promise<void>;
}

/** The newest installed PostgreSQL's bin dir, or undefined when there is none. */
export function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(base, versions[0], 'bin') : undefined;
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)');
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'tm-pg-'));
  const data = join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const as = (cmd: string, args: string[]): [string, string[]] =>
    root ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  execFileSync(...as(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']), { stdio: 'ignore' });
  let port = await claimPort();
  let url = '';
  let child: ChildProcess | undefined;
  const start = async () => {
    const [cmd, args] = as(join(bin, 'postgres'), [
      ...['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'],
      // fsync off: only a machine crash could lose a commit, and the tests crash processes. synchronous_commit stays on:
      // off, a commit could be lost to an immediate stop, which the archive's guarantee (and its tests) rely on.
      ...['-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'max_connections=50'],
    ]);
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const started = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    let output = '';
    started.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4_000)));
    const exited = new Promise<never>((_, reject) =>
      started.once('exit', (code) => reject(Object.assign(new Error(`postgres exited with code ${code}:\n${output}`), { output }))),
    );
    await Promise.race([waitForPostgres(url, started), exited]);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
    // Immediate shutdown, as a crash: the postmaster ends its backends and exits; runuser passes on the exit.
    execFileSync(...as(join(bin, 'pg_ctl'), ['-D', data, 'stop', '-m', 'immediate', '-w']), { stdio: 'ignore' });
    await gone;
  };
  // A first start whose port was taken anyway moves to another; a restart keeps its port (the URL callers hold).
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      if (attempt >= 5 || !addressInUse((err as { output?: string }).output ?? '')) throw err;
      port = await claimPort();
    }
  }
  return {
    url,
    port,
    stop,
    start,
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Connects until it answers; gives up when the server has exited (the caller's race says why) or after 20 s. */
async function waitForPostgres(url: string, server: ChildProcess, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (server.exitCode === null && server.signalCode === null) {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`postgres exited before it answered at ${url}`);
}
