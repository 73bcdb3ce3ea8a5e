/** Lua scripts run by EVALSHA, sent whole (EVAL) once when Redis no longer has them: each call runs its script once. */
import Redis from 'ioredis';
import { defineScripts } from '../../../src/store/redis/define-scripts';
import { redisClientOptions } from '../../../src/store/redis/redis-store';
import { testRedisUrl } from '../../helpers/stores';

const INCR = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
let redis: Redis;
const key = `test:define-scripts:${process.pid}`;

beforeAll(async () => {
  redis = new Redis(testRedisUrl(), redisClientOptions(5_000));
  await new Promise((resolve) => redis.once('ready', resolve));
});
afterAll(async () => {
  await redis.del(key);
  redis.disconnect();
});

test('a script Redis has flushed (a restart) runs once on the next call, and by its SHA after that', async () => {
  const { incr } = defineScripts(redis, { incr: INCR });
  await redis.del(key);
  await redis.script('FLUSH');
  expect(await incr([key], [5])).toBe(5);
  // Cached now: many calls at once (auto-pipelined) each run it once.
  await Promise.all(Array.from({ length: 20 }, () => incr([key], [1])));
  expect(await redis.get(key)).toBe('25');
  await redis.script('FLUSH');
  await Promise.all(Array.from({ length: 20 }, () => incr([key], [1])));
  expect(await redis.get(key)).toBe('45');
});

test("a script's own error reaches the caller, and is not retried as a missing script", async () => {
  const { fail } = defineScripts(redis, { fail: "redis.call('INCR', KEYS[1]); return redis.error_reply('NOPE broken')" });
  await redis.del(key);
  await expect(fail([key], [])).rejects.toThrow('NOPE broken');
  expect(await redis.get(key)).toBe('1');
});

test('the client defines no ioredis commands: an auto-pipelined batch copies none', () => {
  defineScripts(redis, { incr: INCR });
  expect(Object.keys((redis as unknown as { scriptsSet: object }).scriptsSet)).toEqual([]);
});
