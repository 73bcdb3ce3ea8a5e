/**
 * Starts a throwaway real redis-server on loopback (no persistence), for tests and benchmarks. redis-server cannot bind
 * port 0 and report it, so its port is claimed outside the ephemeral range (ports.ts); a start whose port was taken
 * anyway tries another one, and a restart on its own port (after a kill) tries that port again for a while.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { addressInUse, claimPort } from './ports';

export interface RedisServer {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** The name bench/ knows claimPort by. */
export { claimPort as freePort } from './ports';

/** `port`: restart on that port (one this process claimed); without it, a claimed port. */
export async function startRedisServer(extraArgs: string[] = [], port?: number): Promise<RedisServer> {
  for (let attempt = 1; ; attempt++) {
    const p = port ?? (await claimPort());
    const started = await startOn(p, extraArgs);
    if ('server' in started) return started.server;
    // Taken: another port, or for a restart the same one a moment later (a killed server's socket may linger).
    if (!addressInUse(started.output) || attempt >= 5) throw new Error(`redis-server on port ${p} failed:\n${started.output}`);
    if (port !== undefined) await new Promise((r) => setTimeout(r, 200 * attempt));
  }
}

async function startOn(port: number, extraArgs: string[]): Promise<{ server: RedisServer } | { output: string }> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Its log, kept short: what it said when it fails to start.
  let output = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-4_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const failed = new Promise<{ output: string }>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`cannot start redis-server (is it installed?): ${err.message}`)));
    child.once('exit', (code) => resolve({ output: `redis-server exited with code ${code}\n${output}` }));
  });
  const url = `redis://127.0.0.1:${port}`;
  const up = await Promise.race([failed, waitForRedis(url, child).then(() => undefined)]);
  if (up) return up;
  const server: RedisServer = {
    url,
    port,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
  return { server };
}

/** Pings until the server answers; gives up when it has exited (the caller's `failed` says why) or after 10 s. */
async function waitForRedis(url: string, child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (child.exitCode === null && child.signalCode === null) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 50 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      return;
    } catch {
      client.disconnect();
      if (Date.now() > deadline) throw new Error(`redis at ${url} did not answer within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`redis-server exited before it answered at ${url}`);
}
