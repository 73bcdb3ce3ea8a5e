/**
 * A TCP proxy in front of the test redis-server that can lose a reply: armed with a marker, the first command that
 * carries it reaches Redis and runs, but its reply never comes back; the connection then dies, and new connections
 * are refused for a while, so the client gives up on the command (as when Redis is killed right after it ran it).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ReplyDropper {
  url: string;
  /** Loses the reply of the next command whose bytes contain `marker`, then refuses connections for `downMs`. */
  arm(marker: string, downMs: number): void;
  /** Resolves once an armed drop has happened and connections are taken again. */
  dropped(): Promise<void>;
  close(): Promise<void>;
}

export async function startReplyDropper(redisUrl: string): Promise<ReplyDropper> {
  const target = new URL(redisUrl);
  const sockets = new Set<Socket>();
  let armed: { marker: string; downMs: number } | undefined;
  let downUntil = 0;
  let done: Promise<void> | undefined;
  let resolveDone: (() => void) | undefined;
  const server: Server = createServer((client) => {
    if (Date.now() < downUntil) {
      client.destroy();
      return;
    }
    const redis = createConnection({ host: target.hostname, port: Number(target.port || 6379) });
    sockets.add(client).add(redis);
    let swallowing = false;
    client.on('data', (chunk: Buffer) => {
      redis.write(chunk);
      if (armed && chunk.includes(armed.marker)) {
        const { downMs } = armed;
        armed = undefined;
        swallowing = true;
        // Redis has the command; the connection dies before its reply arrives.
        setTimeout(() => {
          downUntil = Date.now() + downMs;
          client.destroy();
          redis.destroy();
          setTimeout(() => resolveDone?.(), downMs);
        }, 200);
      }
    });
    redis.on('data', (chunk: Buffer) => {
      if (!swallowing) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      redis.destroy();
      sockets.delete(client);
      sockets.delete(redis);
    };
    client.on('close', end).on('error', end);
    redis.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    arm(marker, downMs) {
      armed = { marker, downMs };
      done = new Promise((resolve) => (resolveDone = resolve));
    },
    dropped: () => done ?? Promise.resolve(),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
