/** Gives every test worker a real Redis: REDIS_URL when set, else a redis-server of our own on a free port. */
import { startRedisServer } from './redis-server';

export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) {
    process.env.TEST_REDIS_URL = process.env.REDIS_URL;
    return;
  }
  const server = await startRedisServer();
  process.env.TEST_REDIS_URL = server.url;
  (globalThis as { __redisServer?: typeof server }).__redisServer = server;
}
