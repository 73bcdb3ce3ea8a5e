/**
 * The monitor helper's windows: a connection torn in a window (killed by Redis, as a restart or a dropped socket
 * would) measures that window again on a fresh connection, so no test reads a window that lost lines; one that was
 * not torn returns what ran in it and nothing from before.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { startMonitor, type Monitor } from './monitor';
import { testRedisUrl } from './stores';

describe('the monitor helper', () => {
  let redis: Redis;
  let watch: Monitor | undefined;
  const name = `monitor-test-${randomBytes(4).toString('hex')}`;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterEach(() => watch?.close());
  afterAll(() => redis.disconnect());

  /** Kills this test's MONITOR connection, as Redis does to a client it drops. */
  async function killMonitor(): Promise<void> {
    const list = (await redis.client('LIST')) as string;
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `) && / flags=\S*O/.test(line))
      .map((line) => /^id=(\d+)/.exec(line)![1]);
    expect(ids).toHaveLength(1);
    await redis.client('KILL', 'ID', ids[0]);
  }

  it('returns what ran in the window, not what ran before it', async () => {
    watch = await startMonitor(testRedisUrl(), name);
    const before = `monitor-test:before:${randomBytes(4).toString('hex')}`;
    const inside = `monitor-test:inside:${randomBytes(4).toString('hex')}`;
    await redis.get(before);
    const seen = await watch.during(() => redis.get(inside));
    expect(seen.filter((c) => c.args.some((a) => a.startsWith('monitor-test:')))).toEqual([{ args: ['get', inside], lua: false }]);
  });

  it('runs a torn window again on a fresh connection and returns the second run', async () => {
    watch = await startMonitor(testRedisUrl(), name);
    const keys: string[] = [];
    const seen = await watch.during(async () => {
      if (keys.length === 0) await killMonitor();
      keys.push(`monitor-test:run:${keys.length}`);
      await redis.get(keys[keys.length - 1]);
    });
    expect(keys).toHaveLength(2);
    expect(seen.filter((c) => c.args.some((a) => a.startsWith('monitor-test:run:'))).map((c) => c.args)).toEqual([['get', keys[1]]]);
  });
});
